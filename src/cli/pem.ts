/** Splits a PEM bundle into its certificates (a --tsa-ca file may hold several). */
export function splitPem(text: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) throw new Error('no PEM certificate found')
  return blocks.map((block) => `${block}\n`)
}
