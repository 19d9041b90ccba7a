import { RelayError } from "../errors";

/** Opaque paging cursors: base64url of a position the store understands. */
export function encodeCursor(position: string): string {
  return btoa(position).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor(cursor: string): string {
  try {
    return atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    throw new RelayError("INVALID_CURSOR", "The cursor is not one this API returned.");
  }
}
