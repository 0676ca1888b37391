/**
 * SQL fragments shared by repositories. Only fixed column references go in: never user input.
 */

/** A timestamptz column as the same ISO 8601 text JavaScript's `toISOString()` gives (UTC, ms, `Z`). */
export function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
