const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The millisecond timestamp a ULID carries (its first 10 characters, base32), decoded here
 * independently of src/lib/ulid.ts so tests can check what the encoder wrote.
 */
export function ulidTime(id: string): number {
  let time = 0;
  for (const char of id.slice(0, 10)) {
    const digit = CROCKFORD.indexOf(char);
    if (digit < 0) throw new Error(`not a ULID: ${id}`);
    time = time * 32 + digit;
  }
  return time;
}
