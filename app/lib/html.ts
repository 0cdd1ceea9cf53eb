/** Text made safe to put inside HTML (e-mail bodies are built as strings, not by React). */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
