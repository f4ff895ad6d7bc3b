/** Another worker holds the run now: this one stops without writing anything more. */
export class RunTakenOver extends Error {}
