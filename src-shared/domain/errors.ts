/** The closed set of error codes that cross process boundaries (engine ↔ host ↔ app). */
export const ERROR_CODES = [
  'VALIDATION',
  'NOT_FOUND',
  'TARGET_NOT_WRITABLE',
  'INSUFFICIENT_SPACE',
  'DIRECT_IO_UNSUPPORTED',
  'ENGINE_CRASHED',
  'CANCELLED',
  'DISK_FULL',
  'PROTOCOL',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorData {
  code: ErrorCode;
  message: string;
}

/** An error meant for users: a code from the closed set and a message without a stack. */
export class KvbenchError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'KvbenchError';
    this.code = code;
  }
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** Any thrown value as error data: its code when it is one of ours, otherwise INTERNAL. */
export function toErrorData(err: unknown): ErrorData {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return { code: isErrorCode(code) ? code : 'INTERNAL', message };
}
