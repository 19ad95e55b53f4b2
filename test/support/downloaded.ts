// The bytes of an export kvbench serve's backend wrote for the page (export.create answers a
// one-time download URL, export-downloads.ts): taken as the HTTP server takes them, read, removed.
import fs from 'node:fs';
import type { Backend } from '../../src-main/server/backend.ts';

export function downloaded(backend: Pick<Backend, 'downloads'>, answer: unknown): Buffer {
  const url = (answer as { delivery?: { kind: string; url?: string } }).delivery?.url;
  if (url === undefined) throw new Error(`not a download: ${JSON.stringify(answer)}`);
  const offered = backend.downloads.take(url.split('/').at(-1)!);
  if (offered === null) throw new Error(`${url} was downloaded already, or has expired`);
  try {
    return fs.readFileSync(offered.file);
  } finally {
    fs.rmSync(offered.file, { force: true });
  }
}
