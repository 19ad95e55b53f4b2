// The app's words (src-shared/domain/app-words.ts) for text a page shows. A backend message can quote a
// stored label, and labels stored before they were checked may hold control characters or
// bidirectional overrides (U+202E reverses what follows it: "abc\u202Efdp.exe" reads "abcexe.pdf"):
// on a page they are written escaped, `\u{202e}`, as the CLI prints them (printableLines). Exports keep
// the labels as data, as the CLI's do, so the backend's XLSX words are the shared module's own.
import { inAppWords as sharedInAppWords, planMessageInAppWords as sharedPlanMessageInAppWords } from '../src-shared/domain/app-words.ts';
import { printableLines } from '../src-shared/domain/label-text.ts';

export { APP_CONTROL_LABELS, namesFlag, scenarioLabelsIn } from '../src-shared/domain/app-words.ts';

/** inAppWords, with unprintable characters written escaped (line breaks and tabs kept). */
export const inAppWords = (text: string): string => printableLines(sharedInAppWords(text));

/** planMessageInAppWords, with unprintable characters written escaped (line breaks and tabs kept). */
export const planMessageInAppWords = (text: string): string => printableLines(sharedPlanMessageInAppWords(text));
