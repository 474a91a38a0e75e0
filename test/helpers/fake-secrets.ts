/**
 * Token-shaped test values, built by concatenation so that no committed file holds a string a secret scanner
 * (or a reader) would take for a real credential. Each has the prefix and length of its kind, nothing more.
 */
export const fill = (n: number, c = 'a') => c.repeat(n);

export const GHP = 'gh' + 'p_' + fill(36, 'A1');
export const GHO = 'gh' + 'o_' + fill(36, 'b');
export const GHU = 'gh' + 'u_' + fill(36, 'c');
export const GHS = 'gh' + 's_' + fill(36, 'd');
export const GHR = 'gh' + 'r_' + fill(36, 'e');
export const PAT = 'github' + '_pat_' + fill(22, 'F') + '_' + fill(59, 'g');
export const GLPAT = 'gl' + 'pat-' + fill(20, 'h');
export const SLACK_BOT = 'xo' + 'xb-' + '1234567890-' + fill(24, 'i');
export const SLACK_USER = 'xo' + 'xp-' + '1234567890-' + fill(24, 'j');
export const AWS = 'AK' + 'IA' + 'ABCDEFGHIJKLMNOP';
export const GOOGLE_KEY = 'AI' + 'za' + fill(35, 'k');
/** A Google OAuth access token and a JWT, by shape. */
export const GOOGLE_ACCESS_TOKEN = 'ya' + '29.' + fill(20, 'l');
export const JWT = 'ey' + 'JhbGciOiJSUzI1NiJ9' + '.e30.sig';
