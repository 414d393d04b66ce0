/**
 * oclif's `command_not_found` hook: an unknown command, or a known one given a word it does not
 * take (`stats extra`, which oclif reads as the command `stats:extra`), said in one sentence on
 * stderr with exit 2 (CONTRACT.md section 8), naming what the user typed and what exists.
 */
import type {Hook} from '@oclif/core'

const hook: Hook.CommandNotFound = async function ({id, config}) {
  const words = id.split(':')
  const typed = words.join(' ')
  let sentence = `"${typed}" is not a command of ${config.bin} (see ${config.bin} --help)`
  for (let n = words.length - 1; n > 0; n--) {
    const prefix = words.slice(0, n).join(':')
    const spaced = words.slice(0, n).join(' ')
    if (config.findCommand(prefix)) {
      sentence = `${config.bin} ${spaced} takes no argument "${words.slice(n).join(' ')}" (see ${config.bin} ${spaced} --help)`
      break
    }
    const commands = config.commandIDs.filter((other) => other.startsWith(`${prefix}:`)).map((other) => other.slice(prefix.length + 1).replaceAll(':', ' '))
    if (commands.length > 0) {
      sentence = `${config.bin} ${spaced} has no command "${words[n]}"; it has ${commands.join(', ')}`
      break
    }
  }
  process.stderr.write(`Error: ${sentence}\n`)
  this.exit(2)
}

export default hook
