// Reads Parquet tables with two readers that share no code with arrow-go
// (hyparquet with hyparquet-compressors, and DuckDB's @duckdb/node-api) and
// fails unless both read every table whole and agree on every value.
//
//   node check-parquet.mjs OUT.json FILE.parquet...
//
// OUT.json receives the first two tables (cells.parquet, codes.parquet of
// the exported fit) as DuckDB read them, for check-h5ad.py.
import { writeFileSync } from 'node:fs'
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { DuckDBInstance } from '@duckdb/node-api'

const [out, ...files] = process.argv.slice(2)
if (!out || files.length === 0) {
  console.error('usage: node check-parquet.mjs OUT.json FILE.parquet...')
  process.exit(2)
}
const same = (a, b) => typeof a === 'bigint' || typeof b === 'bigint' ? String(a) === String(b) : Object.is(a, b)
const db = await (await DuckDBInstance.create()).connect()
const dumped = []
let failed = false
for (const f of files) {
  const hy = await parquetReadObjects({ file: await asyncBufferFromFile(f), compressors })
  const res = await db.runAndReadAll(`SELECT * FROM read_parquet('${f.replaceAll("'", "''")}')`)
  const duck = res.getRowObjectsJS()
  const cols = res.columnNames()
  const bad = []
  if (hy.length !== duck.length) bad.push(`hyparquet ${hy.length} rows, DuckDB ${duck.length}`)
  if (hy.length > 0 && Object.keys(hy[0]).join() !== cols.join()) bad.push(`columns differ: ${Object.keys(hy[0])} / ${cols}`)
  for (let i = 0; i < Math.min(hy.length, duck.length) && bad.length < 5; i++) {
    for (const c of cols) {
      if (!same(hy[i][c], duck[i][c])) bad.push(`row ${i} column ${c}: hyparquet ${hy[i][c]}, DuckDB ${duck[i][c]}`)
    }
  }
  if (bad.length > 0) {
    failed = true
    console.error(`FAIL ${f}: ${bad.join('; ')}`)
  } else {
    console.error(`ok ${f}: ${duck.length} rows × ${cols.length} columns, both readers agree`)
  }
  if (dumped.length < 2) dumped.push({ file: f, columns: cols, rows: duck.map(r => cols.map(c => typeof r[c] === 'bigint' ? Number(r[c]) : r[c])) })
}
writeFileSync(out, JSON.stringify(dumped))
process.exit(failed ? 1 : 0)
