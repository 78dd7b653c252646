import { Loading } from "../shared/states";
import { Failure } from "./failure";
import { useLoad } from "../shared/use-load";
import { Link } from "../shared/router";
import { NO_RETRY, api } from "./call";
import { RequestsChart } from "./chart";

export function Overview() {
  const { data, error, reload } = useLoad(() => api.get("/api/v1/operator/overview", NO_RETRY), []);
  if (error) return <Failure error={error} retry={reload} />;
  if (!data) return <Loading />;
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
    </section>
  );
}
