/**
 * What a request is, for pacing: reads are only counted; mutations are spaced; content creation is also capped
 * per minute/hour. The HTTP core classes each request (`githubRequestKind`), the rate governor paces by it.
 */
export type RequestKind = 'read' | 'mutation' | 'content';
