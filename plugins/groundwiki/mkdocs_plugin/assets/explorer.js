/*
 * groundwiki's folder explorer: the wiki's folders and pages as a collapsible tree in
 * mkdocs-material's primary sidebar, below the compact navigation. Plain ES2017, no library.
 *
 * The tree is one file per site, `groundwiki/explorer.json` (beside this script's folder):
 *   {"version": 1, "folders": [Folder], "pages": [Page]}
 *   Folder: {"name", "path", "folders": [Folder], "pages": [Page]}   (folders first, by name)
 *   Page:   {"title", "url"}   url relative to the site root         (then pages, by title)
 * It is fetched once: kept in memory (material's instant navigation keeps this script alive
 * from page to page) and in sessionStorage (a full page load shows the tree at once, then
 * checks the file again, usually from the HTTP cache, and redraws if the site changed). A
 * page's HTML carries nothing of the tree, only the script tag.
 *
 * On each page: the current page's folders open and its link marked, the open folders kept
 * while the reader moves on (sessionStorage), a filter box that narrows the tree to the pages
 * whose title holds the text (any case) and their folders. Titles are the writers' text: they
 * go into the page as text nodes only. Folders are buttons with aria-expanded/aria-controls;
 * a folder's pages are made when it first opens, 200 at a time (a vault's folder may hold
 * thousands; a button draws the next ones), with those around the current page.
 */
(function () {
  'use strict';

  if (window.groundwikiExplorer) return; // loaded twice: keep the first

  const STORE = 'groundwiki-explorer:';
  const script = document.currentScript;
  // `<root>/groundwiki/assets/explorer.js` → `<root>/`.
  const ROOT = script && script.src ? new URL('../../', script.src) : new URL('./', document.baseURI);
  const SOURCE = new URL('groundwiki/explorer.json', ROOT).href;
  const DEBOUNCE_MS = 120;
  const api = { chunk: 200 }; // window.groundwikiExplorer

  // --- the tree file -------------------------------------------------------------------------

  let tree = null; // the parsed tree, once loaded
  let treeText = null; // its text, to tell a changed file from the same one
  let pending = null; // the Promise of the first load
  const listeners = new Set(); // redraws to run when a check finds the site changed

  function stored() {
    try { return window.sessionStorage.getItem(STORE + SOURCE); } catch (e) { return null; }
  }

  function store(text) {
    try { window.sessionStorage.setItem(STORE + SOURCE, text); } catch (e) { /* full, or off */ }
  }

  function parse(text) {
    const data = JSON.parse(text);
    if (!data || data.version !== 1 || !Array.isArray(data.folders) || !Array.isArray(data.pages)) {
      throw new Error('not an explorer tree of version 1');
    }
    return data;
  }

  function fetchText() {
    return fetch(SOURCE, { credentials: 'same-origin' }).then((response) => {
      if (!response.ok) throw new Error('HTTP ' + response.status + ' ' + response.statusText);
      return response.text();
    });
  }

  function accept(text) {
    tree = parse(text);
    treeText = text;
    store(text);
    return tree;
  }

  function load() {
    if (pending) return pending;
    const kept = stored();
    if (kept != null) {
      try {
        tree = parse(kept);
        treeText = kept;
        pending = Promise.resolve(tree);
        fetchText().then((text) => {
          if (text === treeText) return;
          accept(text);
          for (const redraw of listeners) redraw();
        }).catch(() => { /* keep the stored tree */ });
        return pending;
      } catch (e) { /* a broken copy: fetch it again */ }
    }
    pending = fetchText().then(accept);
    pending.catch(() => { pending = null; }); // let the next page try again
    return pending;
  }

  // --- URLs ----------------------------------------------------------------------------------

  function decoded(text) {
    try { return decodeURIComponent(text); } catch (e) { return text; }
  }

  // A page's URL as the tree writes it, for comparing: `./` and `index.html` dropped.
  function pagePath(url) {
    return url.replace(/^\.\//, '').replace(/^[\/\\]+/, '').replace(/(^|\/)index\.html$/, '$1');
  }

  // Page URLs are paths inside the site, named after the writers' files: each part is encoded
  // (a `#`, `?` or `:` in a file name is a character of the path, never a fragment, a query or
  // a scheme), joined to the site root, and refused if it would leave it.
  function pageHref(url) {
    if (typeof url !== 'string') return null;
    const path = url.replace(/^[\/\\]+/, '').split('/').map(encodeURIComponent).join('/');
    let resolved;
    try { resolved = new URL(path, ROOT); } catch (e) { return null; }
    if (resolved.origin !== ROOT.origin || !resolved.pathname.startsWith(ROOT.pathname)) return null;
    return resolved.href;
  }

  // The current page's path below the site root, as `pagePath` gives it; null outside the site.
  function herePath() {
    const path = decoded(new URL(window.location.href).pathname);
    const root = decoded(ROOT.pathname);
    return path.startsWith(root) ? pagePath(path.slice(root.length)) : null;
  }

  let here = null; // `herePath()`, taken at each drawing

  function isHere(page) {
    return here !== null && typeof page.url === 'string' && pagePath(page.url) === here;
  }

  // The paths of the folders holding the current page, or null when no folder lists it.
  function currentFolders(data) {
    const found = [];
    function walk(folder, trail) {
      if (folder.pages.some(isHere)) {
        found.push(...trail);
        return true;
      }
      for (const child of folder.folders) {
        if (walk(child, trail.concat(child.path))) return true;
      }
      return false;
    }
    return walk(data, []) ? found : null;
  }

  // --- open folders, kept while the reader moves on -------------------------------------------

  const OPEN_KEY = STORE + 'open:' + SOURCE;
  let open = null; // Set of folder paths

  function openFolders() {
    if (open) return open;
    open = new Set();
    try {
      const kept = JSON.parse(window.sessionStorage.getItem(OPEN_KEY) || '[]');
      if (Array.isArray(kept)) for (const path of kept) if (typeof path === 'string') open.add(path);
    } catch (e) { /* none kept */ }
    return open;
  }

  function keepOpen() {
    try { window.sessionStorage.setItem(OPEN_KEY, JSON.stringify([...openFolders()])); } catch (e) { /* off */ }
  }

  // --- drawing -------------------------------------------------------------------------------

  let ids = 0;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text != null) node.textContent = text;
    return node;
  }

  function label(text) {
    const span = el('span', 'md-ellipsis');
    span.textContent = text;
    return span;
  }

  function pageItem(page) {
    const item = el('li', 'md-nav__item gw-explorer__page');
    const href = pageHref(page.url);
    const link = el(href ? 'a' : 'span', 'md-nav__link');
    if (href) link.href = href;
    link.appendChild(label(String(page.title)));
    if (href && isHere(page)) {
      link.classList.add('md-nav__link--active');
      link.setAttribute('aria-current', 'page');
    }
    item.appendChild(link);
    return item;
  }

  // A folder's item: its button, and its list, filled when it first opens (`fill`).
  function folderItem(folder, isOpen, fill, onToggle) {
    const item = el('li', 'md-nav__item gw-explorer__folder');
    item.dataset.path = folder.path;
    const button = el('button', 'md-nav__link gw-explorer__toggle');
    button.type = 'button';
    button.appendChild(label(String(folder.name)));
    button.appendChild(el('span', 'md-nav__icon md-icon'));
    const list = el('ul', 'md-nav__list gw-explorer__children');
    list.id = 'gw-explorer-' + (++ids);
    button.setAttribute('aria-controls', list.id);
    let filled = false;
    const set = (value) => {
      button.setAttribute('aria-expanded', String(value));
      list.hidden = !value;
      if (value && !filled) {
        filled = true;
        fill(list);
      }
    };
    set(isOpen);
    button.addEventListener('click', () => {
      const value = button.getAttribute('aria-expanded') !== 'true';
      set(value);
      if (onToggle) onToggle(folder.path, value);
    });
    item.appendChild(button);
    item.appendChild(list);
    return item;
  }

  // The whole tree, folders opened as `isOpen(path)` says.
  function fillTree(list, folder, isOpen, onToggle) {
    for (const child of folder.folders) {
      list.appendChild(folderItem(
        child, isOpen(child.path), (sub) => fillTree(sub, child, isOpen, onToggle), onToggle,
      ));
    }
    fillPages(list, folder.pages);
  }

  // A folder's pages, `api.chunk` at a time: the first ones, and those around the current
  // page; a button stands for each run not drawn yet and draws the next of it. A browser
  // lays out a few hundred links at once, not the thousands a vault's folder may hold.
  function fillPages(list, pages) {
    const chunk = Math.max(1, api.chunk | 0);
    const near = Math.ceil(chunk / 8);
    const ranges = [[0, Math.min(pages.length, chunk)]];
    const current = pages.length > chunk ? pages.findIndex(isHere) : -1;
    if (current >= chunk) {
      const from = current - near;
      const to = Math.min(pages.length, current + near + 1);
      if (from <= chunk) ranges[0][1] = to; else ranges.push([from, to]);
    }
    let at = 0;
    for (const [from, to] of ranges) {
      if (from > at) list.appendChild(moreItem(pages, at, from));
      for (let i = from; i < to; i++) list.appendChild(pageItem(pages[i]));
      at = to;
    }
    if (at < pages.length) list.appendChild(moreItem(pages, at, pages.length));
  }

  // A button for the pages from..to not drawn: a click draws the next chunk in its place.
  function moreItem(pages, from, to) {
    const item = el('li', 'md-nav__item gw-explorer__more');
    const count = to - from;
    const button = el('button', 'md-nav__link gw-explorer__more-button');
    button.type = 'button';
    button.appendChild(label(count + (count === 1 ? ' more page' : ' more pages') + '…'));
    button.addEventListener('click', () => {
      const chunk = Math.max(1, api.chunk | 0);
      const end = Math.min(to, from + chunk);
      const drawn = document.createDocumentFragment();
      for (let i = from; i < end; i++) drawn.appendChild(pageItem(pages[i]));
      if (end < to) drawn.appendChild(moreItem(pages, end, to));
      const first = drawn.firstElementChild && drawn.firstElementChild.querySelector('a, button');
      item.replaceWith(drawn);
      if (first) first.focus(); // the keyboard stays where the button was
    });
    item.appendChild(button);
    return item;
  }

  // The pages whose title holds `needle` (lower case), with their folders; null for none.
  function narrowed(folder, needle) {
    const folders = [];
    for (const child of folder.folders) {
      const kept = narrowed(child, needle);
      if (kept) folders.push(kept);
    }
    const pages = folder.pages.filter((page) => String(page.title).toLowerCase().includes(needle));
    if (!folders.length && !pages.length) return null;
    return { name: folder.name, path: folder.path, folders, pages };
  }

  function count(folder) {
    return folder.pages.length + folder.folders.reduce((n, f) => n + count(f), 0);
  }

  function scrollIntoSidebar(node) {
    const wrap = node.closest('.md-sidebar__scrollwrap');
    if (!wrap) return;
    const top = node.getBoundingClientRect().top - wrap.getBoundingClientRect().top;
    if (top < 0 || top > wrap.clientHeight - node.offsetHeight) {
      wrap.scrollTop += top - wrap.clientHeight / 3;
    }
  }

  // --- the widget ----------------------------------------------------------------------------

  function mount(host) {
    const item = el('li', 'md-nav__item gw-explorer');
    item.dataset.gwState = 'loading';
    const heading = el('span', 'md-nav__link gw-explorer__heading', 'Folders');
    heading.id = 'gw-explorer-heading';
    const filter = el('input', 'gw-explorer__filter');
    filter.type = 'search';
    filter.placeholder = 'Filter pages';
    filter.setAttribute('aria-label', 'Filter the folders by page title');
    filter.autocomplete = 'off';
    filter.spellcheck = false;
    const status = el('p', 'gw-explorer__status');
    status.setAttribute('aria-live', 'polite');
    const list = el('ul', 'md-nav__list gw-explorer__tree');
    list.setAttribute('aria-labelledby', heading.id);
    item.append(heading, filter, status, list);
    host.appendChild(item);

    const opened = openFolders();
    let current = null; // the current page's folders

    function onToggle(path, value) {
      if (value) opened.add(path); else opened.delete(path);
      keepOpen();
    }

    function draw() {
      if (!tree) return;
      here = herePath();
      list.textContent = '';
      const needle = filter.value.trim().toLowerCase();
      if (needle) {
        const kept = narrowed(tree, needle);
        const found = kept ? count(kept) : 0;
        status.textContent = found ? found + (found === 1 ? ' page' : ' pages') : 'No page title holds “' + filter.value.trim() + '”';
        if (kept) fillTree(list, kept, () => true, null);
      } else {
        status.textContent = '';
        current = currentFolders(tree);
        for (const path of current || []) opened.add(path);
        if (current && current.length) keepOpen();
        fillTree(list, tree, (path) => opened.has(path), onToggle);
        const active = list.querySelector('.md-nav__link--active');
        if (active) scrollIntoSidebar(active);
      }
      item.dataset.gwState = 'ready';
    }

    let timer = 0;
    filter.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(draw, DEBOUNCE_MS);
    });
    filter.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && filter.value) {
        event.preventDefault();
        filter.value = '';
        clearTimeout(timer);
        draw();
      } else if (event.key === 'Enter') {
        event.preventDefault(); // not material's search, not a form
        clearTimeout(timer);
        draw();
      }
    });

    listeners.add(draw);
    load().then(draw, (error) => {
      item.dataset.gwState = 'error';
      status.textContent = 'The folder tree could not be loaded (' + error.message + ').';
    });
    return () => {
      listeners.delete(draw);
      clearTimeout(timer);
      item.remove();
    };
  }

  let unmount = null;

  function init() {
    if (unmount) { unmount(); unmount = null; }
    // Material's primary navigation; without it (another theme, a page that hides it) nothing.
    const host = document.querySelector('.md-sidebar--primary .md-nav--primary > .md-nav__list');
    if (!host || host.querySelector(':scope > .gw-explorer')) return;
    unmount = mount(host);
  }

  function start() {
    let emitted = false;
    if (window.document$ && typeof window.document$.subscribe === 'function') {
      window.document$.subscribe(() => { emitted = true; init(); });
    }
    // Without material's document$, or when it never emits (file:// pages), run once loaded.
    const fallback = () => setTimeout(() => { if (!emitted) init(); }, 0);
    if (document.readyState === 'loading') {
      document.addEventListener('DOMContentLoaded', fallback, { once: true });
    } else {
      fallback();
    }
  }

  // For tests and debugging: the tree's URL, the tree once loaded, how many pages of a folder
  // are drawn at a time (`chunk`, read at each drawing).
  api.source = SOURCE;
  api.tree = () => tree;
  api.init = init;
  window.groundwikiExplorer = api;

  start();
})();
