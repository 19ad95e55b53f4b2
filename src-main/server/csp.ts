// The renderer's Content Security Policy, the same in the served mode (a response header) and in
// Electron (the app:// protocol's response header). src-renderer/index.html carries it as a meta
// tag too; a unit test keeps the three equal. No 'unsafe-eval', no 'unsafe-inline', nothing remote.
export const RENDERER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

/** Response headers every page and asset gets (frame-ancestors only works as a header). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': `${RENDERER_CSP}; frame-ancestors 'none'`,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
});
