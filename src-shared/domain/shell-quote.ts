/**
 * Arguments of the commands kvbench suggests, written so that the line pastes into a POSIX shell
 * (sh, bash, zsh) as the very text: a suite label or a path may hold spaces, quotes, `$`, backticks,
 * backslashes or newlines.
 *
 * Pure TypeScript: no Node, no DOM.
 */

/** Characters no POSIX shell gives a meaning to: a word of only these needs no quotes. */
const PLAIN_WORD = /^[\w@%+=:,./-]+$/;

/** `fw2.1` as it is; `fw "2.1" $HOME` as `'fw "2.1" $HOME'`, a `'` in it as `'\''` (nothing is special between single quotes but `'`). */
export function shellQuote(arg: string): string {
  return PLAIN_WORD.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** One argument as shellQuote writes it (a regular expression's source, no groups of its own). */
export const SHELL_QUOTED_SOURCE = `(?:[\\w@%+=:,./-]+|(?:'[^']*'|\\\\')+)`;

/** The text of an argument shellQuote wrote. */
export function shellUnquote(word: string): string {
  return PLAIN_WORD.test(word) ? word : word.replace(/'([^']*)'|\\'/g, (_, inside: string | undefined) => inside ?? `'`);
}
