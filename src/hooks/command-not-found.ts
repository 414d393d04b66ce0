/**
 * oclif's `command_not_found` hook: an unknown command, or a known one given a word it does not
 * take (`stats extra`, which oclif reads as the command `stats:extra`), said in one sentence on
 * stderr with exit 2 (README, exit codes), naming what the user typed, the nearest command when
 * one is near, and what exists. Never a prompt: the CLI runs in scripts and CI without a terminal.
 */
import type {Hook} from '@oclif/core'
import {nearest} from '../cli/output.js'

const hook: Hook.CommandNotFound = async function ({id, config}) {
  const words = id.split(':')
  const typed = words.join(' ')
  const known = [
    ...config.commandIDs.filter((other) => !config.findCommand(other)?.hidden),
    ...config.topics.map((t) => t.name),
  ]
  const guess = nearest(id, known)
  const suggestion = guess === undefined ? '' : `: did you mean "${guess.replaceAll(':', ' ')}"?`
  let sentence = `"${typed}" is not a command of ${config.bin}${suggestion} (see ${config.bin} --help)`
  for (let n = words.length - 1; n > 0; n--) {
    const prefix = words.slice(0, n).join(':')
    const spaced = words.slice(0, n).join(' ')
    if (config.findCommand(prefix)) {
      const extra = words.slice(n).join(' ')
      sentence = `${config.bin} ${spaced} takes no argument "${extra}" (see ${config.bin} ${spaced} --help)`
      break
    }
    const commands = config.commandIDs
      .filter((other) => other.startsWith(`${prefix}:`))
      .map((other) => other.slice(prefix.length + 1).replaceAll(':', ' '))
    if (commands.length > 0) {
      const near = nearest(words.slice(n).join(' '), commands)
      const hint = near === undefined ? '' : `: did you mean "${spaced} ${near}"?`
      sentence = `${config.bin} ${spaced} has no command "${words[n]}"${hint} (it has ${commands.join(', ')})`
      break
    }
  }
  process.stderr.write(`Error: ${sentence}\n`)
  this.exit(2)
}

export default hook
