// The little of autocannon's API the bench uses (the package ships no types).
declare module "autocannon" {
  interface Result {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number; average: number };
    non2xx: number;
    errors: number;
    timeouts: number;
    duration: number;
    statusCodeStats?: Record<string, { count: number }>;
  }
  function autocannon(options: Record<string, unknown>): Promise<Result>;
  export default autocannon;
}
