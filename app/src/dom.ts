/** A tiny DOM builder: no framework, no virtual DOM (see app/README.md, "Why no framework"). */

export type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, unknown>;

/**
 * `<tag ...props>children</tag>`: `on<event>` props are listeners, `style` an object of CSS properties, `class`/`for`/`aria-*`/`data-*`/
 * `role` attributes, anything else a property (value, disabled, type...). Falsy children are skipped.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') element.addEventListener(key.slice(2).toLowerCase(), value as EventListener);
    // Through CSSOM: the CSP (style-src 'self') refuses style attributes, not style properties.
    else if (key === 'style' && typeof value === 'object') Object.assign(element.style, value);
    else if (key === 'class' || key === 'for' || key === 'role' || key.startsWith('aria-') || key.startsWith('data-')) element.setAttribute(key, String(value));
    else (element as unknown as Record<string, unknown>)[key] = value;
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `region` shows. */
export function show(region: Element, ...children: Child[]): void {
  region.replaceChildren();
  append(region, children);
}
