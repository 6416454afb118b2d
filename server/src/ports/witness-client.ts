/** What the log's witnessing needs of HTTP: one `add-checkpoint` call to a witness (C2SP tlog-witness). */
export interface WitnessClient {
  /**
   * POSTs `body` to `<prefix>/add-checkpoint`.
   * @returns the status, the media type (without parameters, lower case) and the body as text (bounded).
   * @throws Error when the witness cannot be reached or does not answer in time.
   */
  addCheckpoint(prefix: string, body: string): Promise<{ status: number; type: string; body: string }>;
}
