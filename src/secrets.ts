// Keeping configured secrets (the upstream key and headers, the admin and metrics tokens,
// the sealing secret...) out of text that came from outside and that we pass on, log or
// store. An upstream that echoes our request in an error puts its Authorization header in
// its answer, and not always verbatim: inside a JSON string, URL-encoded, cut short. No
// transport or configuration is imported here: any layer may use it.

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';

/** Shorter values are not looked for: they would match ordinary words (and are no secret worth the name). */
const MIN_SECRET = 6;
/** A secret cut short by whoever echoed it is still scrubbed once this many of its characters are there. */
const MIN_PARTIAL = 8;

// A credential in an Authorization header, whoever's it is (an echo may also have cut ours short).
const AUTH_SCHEME = /\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/-]{6,}=*/gi;

const hex = (n: number) => n.toString(16).toUpperCase().padStart(2, '0');
const lowerPercent = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());

/** The spellings of `secret` an echo may use: as is, inside a JSON string (escaped `/`, ASCII-only `\u` escapes, twice), URL- and form-encoded. */
export function spellingsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const asciiJson = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const forms = new Set([secret, json, json.replaceAll('/', '\\/'), asciiJson, asciiJson.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => `\\u${h.toUpperCase()}`), JSON.stringify(json).slice(1, -1)]);
  let uri: string | undefined;
  try {
    uri = encodeURIComponent(secret);
  } catch {
    // a lone surrogate: no URL spelling
  }
  if (uri !== undefined) {
    // encodeURIComponent, and RFC 3986's stricter set (Python's quote, Go's QueryEscape encode !'()* too).
    for (const encoded of [uri, uri.replace(/[!'()*]/g, (c) => `%${hex(c.charCodeAt(0))}`)]) {
      for (const form of [encoded, lowerPercent(encoded)]) {
        forms.add(form);
        forms.add(form.replaceAll('%20', '+'));
      }
    }
  }
  return [...forms];
}

export class SecretScrubber {
  /** Every spelling of every secret, longest first (so a longer spelling is not cut by a shorter one). */
  private readonly forms: string[];

  constructor(secrets: Iterable<string | undefined> = []) {
    const kept = [...secrets].filter((s): s is string => s !== undefined && s.length >= MIN_SECRET);
    this.forms = [...new Set(kept.flatMap(spellingsOf))].sort((a, b) => b.length - a.length);
  }

  /**
   * `text` with every spelling of every secret replaced by [redacted]; so is a secret's
   * beginning (at least 8 characters) cut off by the end of the text or an ellipsis, and
   * any Bearer or Basic credential.
   */
  scrub(text: string): string {
    let out = text;
    for (const form of this.forms) out = scrubForm(out, form);
    return out.replace(AUTH_SCHEME, `$1$2${REDACTED}`);
  }
}

/** Replaces `form` in `text`, and its beginning where the text was cut short. */
function scrubForm(text: string, form: string): string {
  const head = form.slice(0, Math.min(form.length, MIN_PARTIAL));
  let at = text.indexOf(head);
  if (at === -1) return text;
  let out = '';
  let from = 0;
  while (at !== -1) {
    let end = at + head.length;
    while (end - at < form.length && end < text.length && text.charCodeAt(end) === form.charCodeAt(end - at)) end++;
    const whole = end - at === form.length;
    // A shared beginning followed by something else is not the secret (an URL header's "https://"...).
    if (whole || end === text.length || text.startsWith('…', end) || text.startsWith('...', end)) {
      out += text.slice(from, at) + REDACTED;
      from = end;
    }
    at = text.indexOf(head, Math.max(end, at + 1));
  }
  return out + text.slice(from);
}

/** Characters of outside text we pass on (an upstream's error message), by default. */
export const MAX_OUTSIDE_TEXT = 200;

/**
 * Outside text made fit to pass on in a message of ours: line breaks and other control and
 * format characters removed, secrets scrubbed (before anything is cut, so no secret is
 * left half), spaces collapsed, at most `max` characters (an ellipsis marks a cut).
 */
export function outsideText(text: string, scrubber: SecretScrubber, max = MAX_OUTSIDE_TEXT): string {
  // Whitespace controls become spaces; the rest (escape sequences, bidi overrides, NUL) go.
  const plain = text.replace(/[\t\n\v\f\r\u0085\u2028\u2029]/g, ' ').replace(/[\p{Cc}\p{Cf}]/gu, '');
  const clean = scrubber.scrub(plain).replace(/\s+/g, ' ').trim();
  if (clean.length <= max) return clean;
  // Room for the ellipsis, and not in the middle of a surrogate pair.
  const cut = /[\ud800-\udbff]/.test(clean[max - 2]!) ? max - 2 : max - 1;
  return `${clean.slice(0, cut).trimEnd()}…`;
}
