/** Requests per minute as a small inline SVG: bars of 10-minute sums (144 over 24 hours), no library. */
export function RequestsChart({ perMinute }: { perMinute: number[] }) {
  const buckets: number[] = [];
  for (let i = 0; i < perMinute.length; i += 10) buckets.push(perMinute.slice(i, i + 10).reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...buckets);
  const total = perMinute.reduce((a, b) => a + b, 0);
  const lastHour = perMinute.slice(-60).reduce((a, b) => a + b, 0);
  const w = 288;
  const h = 60;
  const bw = w / Math.max(1, buckets.length);
  return (
    <figure class="op-chart">
      <svg viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={`Requests over the last 24 hours: ${total.toLocaleString()} in all, ${lastHour.toLocaleString()} in the last hour.`}>
        {buckets.map((n, i) => {
          const bh = n === 0 ? 0 : Math.max(1, (n / max) * h);
          return <rect key={i} x={i * bw} y={h - bh} width={Math.max(0.5, bw - 0.4)} height={bh} />;
        })}
      </svg>
      <div class="op-chart-axis" aria-hidden="true"><span>24 hours ago</span><span>Now</span></div>
      <figcaption>
        Requests to this instance, last 24 hours (10-minute bars, highest {max.toLocaleString()}): {total.toLocaleString()} in all, {lastHour.toLocaleString()} in the last hour. Counted since this instance started.
      </figcaption>
    </figure>
  );
}

/**
 * One figure per hour over the last 24 hours as bars (a second series, when given, drawn over the
 * first in the warning colour: failures over sign-ins). The caption says the figures in words.
 */
export function HourBars({ title, values, over, caption, label }: { title: string; values: number[]; over?: number[]; caption: string; label: string }) {
  const max = Math.max(1, ...values, ...(over ?? []));
  const w = 240;
  const h = 48;
  const bw = w / Math.max(1, values.length);
  const bar = (n: number, i: number, cls?: string) => {
    const bh = n === 0 ? 0 : Math.max(1, (n / max) * h);
    return <rect key={`${cls ?? "v"}${i}`} class={cls} x={i * bw} y={h - bh} width={Math.max(0.5, bw - 1)} height={bh} />;
  };
  return (
    <figure class="op-chart op-hours">
      <h2>{title}</h2>
      <svg viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={label}>
        {values.map((n, i) => bar(n, i))}
        {over?.map((n, i) => bar(n, i, "over"))}
      </svg>
      <div class="op-chart-axis" aria-hidden="true"><span>24 hours ago</span><span>This hour</span></div>
      <figcaption>{caption}</figcaption>
    </figure>
  );
}
