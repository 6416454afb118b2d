/**
 * A file name safe to keep and show: the last path segment, without control characters, at most 255
 * characters (any script is kept as is); `unnamed` when nothing is left.
 */
export function cleanFileName(name: string | undefined): string {
  const last = (name ?? '').split(/[\\/]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
  const cleaned = last.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return [...cleaned].slice(0, 255).join('') || 'unnamed';
}
