// Imported first by main.ts: Elysia reads NODE_ENV once, when it loads, and in development mode
// builds a large pretty-printed message for every validation failure, which we never show.
process.env.NODE_ENV ??= "production";
