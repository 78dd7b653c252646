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
