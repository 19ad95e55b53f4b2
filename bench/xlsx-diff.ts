// Two XLSX files read back with exceljs and compared: sheet names, views, every row's values (numbers,
// strings, booleans, empty), the header and sample rows' fonts, sample cells' types. The About sheet's
// "exported at" is expected to differ. For export-scale.ts: node bench/xlsx-diff.ts OLD.xlsx NEW.xlsx
import ExcelJS from 'exceljs';
const [a, b] = process.argv.slice(2);
const read = async (f: string) => { const wb = new ExcelJS.Workbook(); await wb.xlsx.readFile(f); return wb; };
const A = await read(a);
const B = await read(b);
const diffs: string[] = [];
const names = (wb: ExcelJS.Workbook) => wb.worksheets.map((w) => w.name);
if (JSON.stringify(names(A)) !== JSON.stringify(names(B))) diffs.push(`sheets ${names(A)} vs ${names(B)}`);
let cells = 0;
for (const wa of A.worksheets) {
  const wbs = B.getWorksheet(wa.name)!;
  if (JSON.stringify(wa.views) !== JSON.stringify(wbs.views)) diffs.push(`${wa.name} views ${JSON.stringify(wa.views)} vs ${JSON.stringify(wbs.views)}`);
  if (wa.rowCount !== wbs.rowCount || wa.columnCount !== wbs.columnCount) diffs.push(`${wa.name} size ${wa.rowCount}x${wa.columnCount} vs ${wbs.rowCount}x${wbs.columnCount}`);
  const va = wa.getSheetValues(), vb = wbs.getSheetValues();
  for (let r = 1; r < Math.max(va.length, vb.length); r++) {
    const ja = JSON.stringify(va[r] ?? null), jb = JSON.stringify(vb[r] ?? null);
    cells += Array.isArray(va[r]) ? (va[r] as unknown[]).length - 1 : 0;
    if (ja !== jb && !(wa.name === 'About' && (va[r] as unknown[])?.[1] === 'exported at')) diffs.push(`${wa.name} row ${r}: ${ja.slice(0, 200)} vs ${jb.slice(0, 200)}`);
  }
  // Styles: the header row's cells bold, no other row styled.
  for (const r of [1, 2, wa.rowCount]) {
    const fa = JSON.stringify((wa.getRow(r).values as unknown[]).map((_, c) => wa.getRow(r).getCell(c).font ?? null));
    const fb = JSON.stringify((wbs.getRow(r).values as unknown[]).map((_, c) => wbs.getRow(r).getCell(c).font ?? null));
    if (fa !== fb) diffs.push(`${wa.name} row ${r} fonts ${fa.slice(0, 120)} vs ${fb.slice(0, 120)}`);
  }
  // Types of a sample of cells (value JSON cannot tell a shared from an inline string; both read as strings).
  for (const r of [2, Math.floor(wa.rowCount / 2), wa.rowCount]) for (let c = 1; c <= wa.columnCount; c++) if (wa.getRow(r).getCell(c).type !== wbs.getRow(r).getCell(c).type) diffs.push(`${wa.name}!R${r}C${c} type ${wa.getRow(r).getCell(c).type} vs ${wbs.getRow(r).getCell(c).type}`);
}
console.log(`${cells} cells compared over ${A.worksheets.length} sheets; creator ${A.creator} vs ${B.creator}; ${diffs.length} difference(s)`);
for (const d of diffs.slice(0, 20)) console.log(d);
process.exit(diffs.length === 0 ? 0 : 1);
