import { Loading } from "../shared/states";
import { Failure } from "./failure";
import { useLoad } from "../shared/use-load";
import { Link } from "../shared/router";
import { NO_RETRY, api } from "./call";
import { HourBars, RequestsChart } from "./chart";

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const ms = (n: number | null) => (n === null ? "no requests" : n >= 10000 ? "over 10 s" : n >= 1000 ? `${n / 1000} s` : `${n} ms`);

export function Overview() {
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/overview", NO_RETRY), []);
  if (error) return <Failure error={error} retry={reload} />;
  if (!data) return <Loading />;
  const hours = data.hours;
  const requests = sum(hours.map((x) => x.requests));
  const errors = sum(hours.map((x) => x.errors));
  const signIns = sum(hours.map((x) => x.sign_ins));
  const failures = sum(hours.map((x) => x.sign_in_failures));
  const worstP99 = hours.reduce<number | null>((m, x) => (x.p99_ms === null ? m : Math.max(m ?? 0, x.p99_ms)), null);
  const now = hours.at(-1)!;
  const rate = (e: number, n: number) => (n === 0 || e === 0 ? "0 %" : `${((e / n) * 100).toFixed(e / n < 0.01 ? 2 : 1)} %`);
  return (
    <section>
      <h1>Overview</h1>
      <ul class="op-stats">
        <li><Link href="/operator/organizations"><strong>{data.organizations.toLocaleString()}</strong> organizations</Link>{data.organizations_disabled > 0 && <span>, {data.organizations_disabled} disabled</span>}</li>
        <li><Link href="/operator/mail"><strong>{data.mail_pending.toLocaleString()}</strong> mails waiting</Link></li>
        <li><Link href="/operator/mail?status=failed"><strong>{data.mail_failed.toLocaleString()}</strong> mails failed</Link></li>
        <li><Link href="/operator/jobs"><strong>{data.jobs_running.toLocaleString()}</strong> jobs running</Link></li>
      </ul>
      <RequestsChart perMinute={data.requests_per_minute} />
      <p class="hint">The figures below are this instance's, hour by hour, since it started (at most 24 hours). With several instances, each shows its own: Prometheus adds them up.</p>
      <div class="op-hour-grid">
        <HourBars
          title="Slowest 1 % of requests (p99)"
          values={hours.map((x) => x.p99_ms ?? 0)}
          label={`p99 per hour: this hour ${ms(now.p99_ms)}, the worst hour ${ms(worstP99)}.`}
          caption={`This hour ${ms(now.p99_ms)}; the worst hour ${ms(worstP99)}. Each figure is an upper bound.`}
        />
        <HourBars
          title="Server errors (5xx)"
          values={hours.map((x) => x.errors)}
          label={`Server errors per hour: ${errors.toLocaleString()} in 24 hours, ${rate(errors, requests)} of requests.`}
          caption={`${errors.toLocaleString()} in 24 hours, ${rate(errors, requests)} of requests; this hour ${now.errors.toLocaleString()} (${rate(now.errors, now.requests)}).`}
        />
        <HourBars
          title="Sign-ins and failures"
          values={hours.map((x) => x.sign_ins + x.sign_in_failures)}
          over={hours.map((x) => x.sign_in_failures)}
          label={`Sign-in steps per hour: ${signIns.toLocaleString()} passed and ${failures.toLocaleString()} refused in 24 hours.`}
          caption={`${signIns.toLocaleString()} sign-in steps passed, ${failures.toLocaleString()} refused for a wrong password or code (darker) in 24 hours. A password then a code count as two steps.`}
        />
      </div>
    </section>
  );
}
