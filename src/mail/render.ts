/** The parts of a transactional mail: a greeting, what happened, and one button. */
export interface MailContent {
  subject: string;
  heading: string;
  /** Plain sentences; each becomes a paragraph. Never HTML: they are escaped. */
  paragraphs: string[];
  action: { label: string; url: string };
  /** A closing line such as "The link works once, for 10 minutes." */
  footer: string;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/** Renders both bodies from one source, so the plain-text and HTML mail always say the same. */
export function renderMail(c: MailContent): { subject: string; text: string; html: string } {
  const text = [c.heading, "", ...c.paragraphs.flatMap((p) => [p, ""]), `${c.action.label}: ${c.action.url}`, "", c.footer, ""].join("\n");
  const html = `<!doctype html>
<html><body style="font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#1f2328;max-width:560px;margin:0 auto;padding:24px">
<h1 style="font-size:20px">${escapeHtml(c.heading)}</h1>
${c.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("\n")}
<p><a href="${escapeHtml(c.action.url)}" style="display:inline-block;background:#0969da;color:#fff;padding:10px 16px;border-radius:6px;text-decoration:none">${escapeHtml(c.action.label)}</a></p>
<p style="color:#59636e;font-size:13px">${escapeHtml(c.footer)}</p>
</body></html>
`;
  return { subject: c.subject, text, html };
}
