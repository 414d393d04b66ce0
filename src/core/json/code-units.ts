/** The UTF-16 code units of JSON's structural characters (RFC 8259 section 2), for scanners of JSON text. */
export const QUOTE = 0x22
export const BACKSLASH = 0x5c
export const OPEN_OBJECT = 0x7b
export const CLOSE_OBJECT = 0x7d
export const OPEN_ARRAY = 0x5b
export const CLOSE_ARRAY = 0x5d
export const COMMA = 0x2c
export const COLON = 0x3a
