/**
 * Why a write into something already open or not a file to replace (stdout, a pipe, a device such as
 * /dev/full) failed, in words, by errno; the code itself follows in parentheses where it is said.
 * One wording for a failed stdout (cli/closed-output.ts) and a failed `--out /dev/full` (FileWriteError).
 */
const WRITE_FAILURES: Readonly<Record<string, string>> = {
  ENOSPC: 'no space is left on the device',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'the file has grown past the largest size allowed',
  EIO: 'an I/O error',
  EROFS: 'a read-only filesystem',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EBADF: 'it is not open for writing',
};

/** The words for errno `code`, or undefined where it has none (the error's own message is said then). */
export const writeFailureWords = (code: string | undefined): string | undefined => (code === undefined ? undefined : WRITE_FAILURES[code]);
