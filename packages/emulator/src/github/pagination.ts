/** `page`/`per_page` pagination with a GitHub-style `Link` header. */
export function paginate<T>(items: readonly T[], query: URLSearchParams, baseUrl: string, defaultPerPage = 30) {
  const perPage = Number(query.get('per_page') ?? defaultPerPage);
  const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  const link = (p: number, rel: string) => {
    const params = new URLSearchParams(query);
    params.set('page', String(p));
    params.set('per_page', String(perPage));
    return `<${baseUrl}?${params.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page < lastPage) links.push(link(page + 1, 'next'), link(lastPage, 'last'));
  if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
  return { items: slice, headers: links.length ? { link: links.join(', ') } : ({} as Record<string, string>) };
}
