/** A strict XML 1.0 reader for tests that check a document is well-formed (JUnit output). */
export interface XmlElement {
  name: string
  attributes: Record<string, string>
  children: XmlElement[]
  text: string
}

/**
 * A tiny, strict, regex-free XML 1.0 reader, enough to prove the JUnit output well-formed:
 * matching tags, quoted unique attributes without `<`, only the five predefined entities and
 * character references, no raw `&` or `<` in text, only characters XML 1.0 section 2.2 allows.
 */
export function parseXml(source: string): XmlElement {
  let at = 0
  const fail = (why: string): never => {
    throw new Error(`not well-formed XML at ${at}: ${why}`)
  }
  const startsWith = (text: string) => source.startsWith(text, at)
  const skipSpace = () => {
    while (at < source.length && ' \t\r\n'.includes(source[at]!)) at++
  }
  const expectText = (text: string) => (startsWith(text) ? (at += text.length) : fail(`expected ${text}`))
  const readName = () => {
    const start = at
    while (at < source.length && !' \t\r\n/>=<"\''.includes(source[at]!)) at++
    return at > start ? source.slice(start, at) : fail('expected a name')
  }
  const decode = (raw: string): string => {
    let out = ''
    for (let i = 0; i < raw.length; i++) {
      const code = raw.codePointAt(i)!
      if (code > 0xffff) i++
      const allowed =
        code === 0x9 ||
        code === 0xa ||
        code === 0xd ||
        (code >= 0x20 && code <= 0xd7ff) ||
        (code >= 0xe000 && code <= 0xfffd) ||
        code >= 0x10000
      if (!allowed) fail(`character U+${code.toString(16)} is not allowed`)
      if (raw[i] !== '&') {
        out += String.fromCodePoint(code)
        continue
      }
      const end = raw.indexOf(';', i)
      if (end < 0) fail('unterminated reference')
      const ref = raw.slice(i + 1, end)
      const named: Record<string, string> = {amp: '&', lt: '<', gt: '>', quot: '"', apos: "'"}
      if (named[ref] !== undefined) out += named[ref]
      else if (ref.startsWith('#x')) out += String.fromCodePoint(parseInt(ref.slice(2), 16))
      else if (ref.startsWith('#') && ref.length > 1 && [...ref.slice(1)].every((c) => c >= '0' && c <= '9'))
        out += String.fromCodePoint(Number(ref.slice(1)))
      else fail(`unknown entity &${ref};`)
      i = end
    }
    return out
  }
  const readElement = (): XmlElement => {
    expectText('<')
    const element: XmlElement = {name: readName(), attributes: {}, children: [], text: ''}
    for (;;) {
      skipSpace()
      if (startsWith('/>')) {
        at += 2
        return element
      }
      if (startsWith('>')) break
      const name = readName()
      if (Object.hasOwn(element.attributes, name)) fail(`duplicate attribute ${name}`)
      skipSpace()
      expectText('=')
      skipSpace()
      const quote = source[at]
      if (quote !== '"' && quote !== "'") fail('attribute value must be quoted')
      const end = source.indexOf(quote!, at + 1)
      if (end < 0) fail('unterminated attribute value')
      const raw = source.slice(at + 1, end)
      if (raw.includes('<')) fail('< in attribute value')
      element.attributes[name] = decode(raw)
      at = end + 1
    }
    at++
    for (;;) {
      if (at >= source.length) fail(`unclosed <${element.name}>`)
      if (startsWith('</')) {
        at += 2
        if (readName() !== element.name) fail(`mismatched closing tag for <${element.name}>`)
        skipSpace()
        expectText('>')
        return element
      }
      if (startsWith('<')) {
        element.children.push(readElement())
        continue
      }
      const end = source.indexOf('<', at)
      const raw = source.slice(at, end < 0 ? source.length : end)
      if (raw.includes(']]>')) fail(']]> in text')
      element.text += decode(raw)
      at += raw.length
    }
  }
  if (startsWith('<?xml')) {
    const end = source.indexOf('?>')
    if (end < 0) fail('unterminated declaration')
    at = end + 2
  }
  skipSpace()
  const root = readElement()
  skipSpace()
  if (at !== source.length) fail('content after the root element')
  return root
}
