// Errors as the app's contract carries them: a code from its closed set and a message, never a stack.
import { z } from 'zod';
import { isIpcErrorCode, type IpcError } from '../../src-shared/ipc/contract.ts';

/** Any thrown value as error data with a code from the contract's closed set; never a stack. */
export function toIpcError(err: unknown, fallback: IpcError['code'] = 'INTERNAL'): IpcError {
  if (err instanceof z.ZodError) return { code: 'VALIDATION', message: z.prettifyError(err) };
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return { code: isIpcErrorCode(code) ? code : fallback, message };
}

/** Throws an error the contract carries as `{ code, message }`. */
export function fail(code: IpcError['code'], message: string): never {
  throw Object.assign(new Error(message), { code });
}
