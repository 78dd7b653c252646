/** Whether this test run is the PostgreSQL one (scripts/test.ts sets SUITE_TEST_BACKEND for it). */
export const ON_POSTGRES = process.env.SUITE_TEST_BACKEND === "postgres";
