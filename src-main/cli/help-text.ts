/**
 * `text` broken at spaces into lines of at most `width` characters (a longer word gets a line of its
 * own), each line after `indent` and ending in a newline: for a generated sentence in a hand-wrapped
 * --help text.
 */
export function wrapText(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => `${indent}${l}\n`).join('');
}
