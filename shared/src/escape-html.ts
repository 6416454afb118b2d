/**
 * `s` safe as HTML text or as a quoted attribute value: `& < > " '` become numeric character references
 * (`&#38;`, `&#60;`, …), everything else is kept. For the HTML parts of the service's e-mails.
 */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
