// Owns how non-text content reads to the model when it must travel as text: a resource link, an
// embedded text resource, a binary resource. Prompts and tool results render them the same way.

export function linkText(title: string, uri: string): string {
  return `[${title}](${uri})`;
}

export function resourceText(uri: string, text: string): string {
  return `<resource uri="${uri}">\n${text}\n</resource>`;
}

export function binaryResourceText(uri: string, mimeType: string | undefined): string {
  return `[binary resource ${uri}${mimeType ? ` (${mimeType})` : ""} not shown]`;
}
