import { type IpcMainInvokeEvent, ipcMain } from 'electron';
import { ClientError, toClientError } from '../common/errors';
import { CHANNELS, type Channel, type IpcContract, type IpcResult } from '../common/ipc';
import { IPC_SCHEMAS } from './ipc-schemas';

/** What main does for each channel, given an already validated payload. */
export type IpcHandlers = {
  [C in Channel]: (
    input: IpcContract[C]['input'],
    event: IpcMainInvokeEvent,
  ) => Promise<IpcContract[C]['output']>;
};

const fail = (error: ClientError): IpcResult<never> => ({ ok: false, error: error.toJSON() });

/**
 * Runs one invoke: the sender must be the app's own page, the payload at most one argument that its
 * channel's zod schema accepts (`ipc-schemas.ts`); only then is the handler called. Never throws: the
 * answer is an `IpcResult` envelope carrying the error's kind for the renderer.
 */
export async function dispatch<C extends Channel>(
  channel: C,
  handlers: IpcHandlers,
  event: IpcMainInvokeEvent,
  args: unknown[],
  isTrustedSender: (event: IpcMainInvokeEvent) => boolean,
): Promise<IpcResult<IpcContract[C]['output']>> {
  if (!isTrustedSender(event)) {
    return fail(
      new ClientError({ kind: 'forbidden', message: `${channel}: refused, the sender is not the app` }),
    );
  }
  if (args.length > 1) {
    return fail(new ClientError({ kind: 'invalid-input', message: `${channel}: expected one payload` }));
  }
  const parsed = IPC_SCHEMAS[channel].safeParse(args[0]);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.map(String).join('.')}: ` : '';
    return fail(
      new ClientError({
        kind: 'invalid-input',
        message: `${channel}: ${where}${issue?.message ?? 'invalid payload'}`,
      }),
    );
  }
  try {
    const handler = handlers[channel] as (
      input: IpcContract[C]['input'],
      event: IpcMainInvokeEvent,
    ) => Promise<IpcContract[C]['output']>;
    return { ok: true, value: await handler(parsed.data as IpcContract[C]['input'], event) };
  } catch (e) {
    return fail(toClientError(e));
  }
}

/** Registers one `ipcMain.handle` per named channel (and nothing else). Returns a function removing them. */
export function registerIpcHandlers(
  handlers: IpcHandlers,
  isTrustedSender: (event: IpcMainInvokeEvent) => boolean,
): () => void {
  const channels = Object.values(CHANNELS);
  for (const channel of channels) {
    ipcMain.handle(channel, (event, ...args: unknown[]) =>
      dispatch(channel, handlers, event, args, isTrustedSender),
    );
  }
  return () => {
    for (const channel of channels) ipcMain.removeHandler(channel);
  };
}
