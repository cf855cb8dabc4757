// Building elements without a framework: `h('button', {type: 'button', onclick}, 'Save')`.
// Attributes named on* become listeners; true/false/null switch boolean attributes.

type Child = Node | string | number | null | undefined | false;
type AttributeValue = string | number | boolean | null | undefined | ((event: never) => void);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes?: Record<string, AttributeValue> | null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (typeof value === 'function') element.addEventListener(name.slice(2), value as EventListener);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  element.append(...childNodes(children));
  return element;
}

function childNodes(children: (Child | Child[])[]): (Node | string)[] {
  return children
    .flat()
    .flatMap((child) =>
      child === null || child === undefined || child === false
        ? []
        : [typeof child === 'number' ? String(child) : child],
    );
}

/** Replace everything inside `parent`. */
export function replaceChildren(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren(...childNodes(children));
}
