import type { RowVersion } from '../db/pagination.ts';

/**
 * The JSON text of row versions already presented, by row id: a list request reads only the ids
 * and versions of its page from PostgreSQL and, when every one is known here, splices their texts.
 * A row written since has another version and is read and presented afresh, so what is answered is
 * always what PostgreSQL holds at the time of the request: this keeps presentations of exact row
 * versions, not responses (profiling showed building each ad's JSON, in PostgreSQL or here, as the
 * read path's largest cost).
 *
 * `generation` names whatever else a text depends on (the registry's version, for the tokens and
 * routes every ad and trade nests): a text of another generation is not current either.
 * At most `capacity` texts are kept; the least recently stored go first.
 */
export class PresentedRows<Row extends RowVersion> {
  private readonly texts = new Map<string, { version: string; generation: string; text: string }>();

  constructor(private readonly capacity = 20_000) {}

  /** The texts of exactly these row versions, in order; undefined when any one is not known. */
  known(rows: readonly RowVersion[], generation: string): string[] | undefined {
    const texts: string[] = [];
    for (const row of rows) {
      const entry = this.texts.get(row.id);
      if (entry === undefined || entry.version !== row.version || entry.generation !== generation) return undefined;
      texts.push(entry.text);
    }
    return texts;
  }

  /** Each row's text, presented now unless this exact version is known; remembers the new ones. */
  textsOf(rows: readonly Row[], generation: string, present: (row: Row) => unknown): string[] {
    return rows.map((row) => this.text(row, generation, present));
  }

  /** The row's text, presented now unless this exact version is known. */
  text(row: Row, generation: string, present: (row: Row) => unknown): string {
    const entry = this.texts.get(row.id);
    if (entry !== undefined && entry.version === row.version && entry.generation === generation) return entry.text;
    const text = JSON.stringify(present(row));
    this.texts.delete(row.id);
    this.texts.set(row.id, { version: row.version, generation, text });
    if (this.texts.size > this.capacity) this.texts.delete(this.texts.keys().next().value!);
    return text;
  }
}
