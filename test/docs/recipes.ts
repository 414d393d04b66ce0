/**
 * The shell recipes of the docs (docs/recipes.md): every fenced block of README.md and docs/*.md
 * whose language is sh, bash or shell, unless the line right before its fence is
 * `<!-- no-run: reason -->`.
 */
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

export interface ShellBlock {
  /** The page, relative to the repository (`docs/verification.md`). */
  page: string
  /** The 1-based line of the opening fence. */
  line: number
  code: string
  /** Why the block is not run, when it is marked so. */
  noRun?: string
}

const SHELLS = new Set(['sh', 'bash', 'shell'])
const OPENING = /^( *)(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/
const NO_RUN = /^\s*<!--\s*no-run:\s*(.*?)\s*-->\s*$/

/** The shell blocks of one Markdown text, with their content as printed (the fence's indentation removed). */
export function shellBlocks(page: string, markdown: string): ShellBlock[] {
  const lines = markdown.split('\n')
  const blocks: ShellBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i]!)
    if (!open) continue
    const [, indent, fence, language] = open
    const closing = new RegExp(`^ *${fence![0] === '`' ? '`' : '~'}{${fence!.length},}\\s*$`)
    let end = i + 1
    while (end < lines.length && !closing.test(lines[end]!)) end++
    if (SHELLS.has(language!)) {
      const body = lines.slice(i + 1, end).map((text) => text.replace(new RegExp(`^ {0,${indent!.length}}`), ''))
      const marker = i > 0 ? NO_RUN.exec(lines[i - 1]!) : null
      const block: ShellBlock = {page, line: i + 1, code: `${body.join('\n')}\n`}
      if (marker) block.noRun = marker[1]
      blocks.push(block)
    }
    i = end
  }
  return blocks
}

/** The pages whose recipes are run: README.md and every page of docs/. */
export function recipePages(root: string): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
  return ['README.md', ...docs]
}

export function allShellBlocks(root: string): ShellBlock[] {
  return recipePages(root).flatMap((page) => shellBlocks(page, readFileSync(path.join(root, page), 'utf8')))
}
