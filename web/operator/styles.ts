/**
 * The console's own style rules, adopted by the document when the console's chunk loads. Not an
 * imported .css file: the bundler would copy such a file into the app's first-load CSS too, and
 * every organization's first page would carry the console's rules. A constructed style sheet is
 * not inline style in the sense of the page's CSP (style-src 'self').
 */
const RULES = `
.op-stats { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: 0.75rem; }
.op-stats li { border: 1px solid #d0d5dd; border-radius: 8px; padding: 0.75rem 1rem; }
.op-stats strong { display: block; font-size: 1.6rem; }
.op-chart { margin: 1.5rem 0 0; }
.op-chart svg { width: 100%; max-width: 48rem; height: 6rem; display: block; background: #fff; border: 1px solid #d0d5dd; border-radius: 6px; }
.op-chart-axis { display: flex; justify-content: space-between; max-width: 48rem; color: #555; font-size: 0.85rem; }
.op-chart rect { fill: #3b6fd8; }
.op-hour-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem 1.5rem; }
.op-hours { margin: 0.5rem 0 0; }
.op-hours h2 { font-size: 1rem; margin: 0 0 0.4rem; }
.op-hours svg { height: 4rem; }
.op-chart rect.over { fill: #b42318; }
.op-chart figcaption { color: #555; font-size: 0.9rem; margin-top: 0.4rem; }
.op-search { max-width: 24rem; }
.op-filter { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-bottom: 0.5rem; }
.op-filter button[aria-pressed="true"] { background: #1d3f8f; color: #fff; border-color: #1d3f8f; }
.op-table { width: 100%; border-collapse: collapse; }
.op-test-mail { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: flex-end; margin: 1rem 0; }
.op-test-mail .field { margin: 0; flex: 1 1 16rem; max-width: 24rem; }
.op-table th, .op-table td { text-align: left; padding: 0.45rem 0.6rem; border-bottom: 1px solid #e4e7ec; vertical-align: top; }
.op-table .muted, .op-layout .muted { color: #666; font-size: 0.9em; }
.op-actions { white-space: nowrap; }
.op-actions button + button { margin-left: 0.4rem; }
.op-facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.4rem 1.2rem; }
.op-facts dt { font-weight: 600; }
.op-progress progress { width: 100%; max-width: 32rem; height: 1rem; }
.op-note { border-left: 4px solid #3b6fd8; padding: 0.5rem 0.9rem; background: #f3f6fc; max-width: 48rem; }
.op-schedule { margin-top: 2rem; max-width: 40rem; }
.op-schedule .check { display: flex; gap: 0.5rem; align-items: center; margin: 0.5rem 0; }
.op-schedule-fields { display: flex; flex-wrap: wrap; gap: 0 1rem; }
.op-schedule-fields .field { flex: 1 1 10rem; }
.op-layout code { overflow-wrap: anywhere; }
.op-codes { margin-top: 2rem; max-width: 40rem; }
.op-code-list { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(8rem, 1fr)); gap: 0.4rem 1rem; font-size: 1.1rem; }
.op-layout nav a[aria-current="page"] { font-weight: 700; text-decoration: underline; }
@media (max-width: 640px) {
  .op-table thead { display: none; }
  .op-table tr { display: block; border-bottom: 1px solid #d0d5dd; padding: 0.5rem 0; }
  .op-table td { display: flex; gap: 0.75rem; border: 0; padding: 0.2rem 0; overflow-wrap: anywhere; min-width: 0; }
  .op-table td[data-label]::before { content: attr(data-label); font-weight: 600; min-width: 7.5rem; }
  .op-facts { grid-template-columns: 1fr; }
  .op-facts dd { margin: 0 0 0.6rem; }
}
`;

let adopted = false;
export function adoptConsoleStyles(): void {
  if (adopted) return;
  adopted = true;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(RULES);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}
