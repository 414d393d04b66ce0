// The commit-msg hook's check (README.md, Development): the subject, the first line git keeps, at most
// 72 characters, counted as Unicode code points.
import * as fs from 'node:fs'

const MAX_SUBJECT = 72
const message = fs.readFileSync(process.argv[2], 'utf8')
// git drops lines starting with its comment character (`#` unless configured) and leading blank lines.
const subject = (message.split('\n').find((line) => !line.startsWith('#') && line.trim() !== '') ?? '').trimEnd()
const length = [...subject].length
if (length > MAX_SUBJECT) {
  process.stderr.write(
    `commit-msg: the subject is ${length} characters, over ${MAX_SUBJECT}:\n  ${subject}\n` +
      'Say the one change in a short subject; put the rest in the body, after a blank line.\n',
  )
  process.exit(1)
}
