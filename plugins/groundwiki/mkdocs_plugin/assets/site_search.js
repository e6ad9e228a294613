/* groundwiki: mkdocs-material's search box answered by Pagefind (mkdocs_plugin/site_search.py).
 *
 * Added to the pages only when the site is indexed with Pagefind. Material's box, its dialog
 * and its keyboard handling stay (its own index is empty); this script loads pagefind.js on the
 * first focus of the box, and renders each query's results into the box's result area, in
 * material's result markup, so material's arrow keys and Enter reach them.
 *
 * Page text is untrusted: titles and summaries are set as text. Pagefind's excerpt is text in
 * which Pagefind escaped `<` and `>` and put <mark> around the matched words; it is split at
 * those marks and built as text nodes and <mark> elements, never parsed as HTML.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  if (!script || !script.src || location.protocol === "file:") return;
  // Once per document, however often a navigation runs the page's scripts again.
  if (window.groundwikiSiteSearch) return;
  window.groundwikiSiteSearch = true;
  // groundwiki/assets/site_search.js -> the site root, wherever the site is served from.
  var root = new URL("../../", script.src);
  var INPUT = ".md-search__input";
  var SHOWN = 10; // results rendered per query
  var loading = null; // the promise of the initialised Pagefind module
  var latest = 0; // the query whose results may render (an older one's are dropped)
  var running = false; // a search is in Pagefind's worker
  var waiting = null; // the newest query typed meanwhile: [input, query, ticket]

  // Material's `search.highlight`: the page opened from a result highlights the query.
  function highlights() {
    try {
      var config = JSON.parse(document.getElementById("__config").textContent);
      return (config.features || []).indexOf("search.highlight") >= 0;
    } catch (error) {
      return false;
    }
  }

  function pagefind() {
    if (!loading) {
      loading = import(new URL("pagefind/pagefind.js", root).href).then(function (pf) {
        return pf.options({ baseUrl: root.pathname, excerptLength: 24 }).then(function () {
          pf.init();
          return pf;
        });
      });
      loading.catch(function () {
        loading = null; // not there yet (a server still indexing): try again next time
      });
    }
    return loading;
  }

  function resultArea(input) {
    var search = input.closest("[data-md-component=search]") || document;
    var result = search.querySelector("[data-md-component=search-result]");
    if (!result) return null;
    var ours = result.querySelector(".gw-search");
    if (!ours) {
      result.classList.add("gw-pagefind");
      ours = document.createElement("div");
      ours.className = "gw-search";
      var meta = document.createElement("div");
      meta.className = "md-search-result__meta gw-search__meta";
      var list = document.createElement("ol");
      list.className = "md-search-result__list gw-search__list";
      list.setAttribute("role", "presentation");
      ours.append(meta, list);
      result.append(ours);
    }
    return ours;
  }

  function say(area, text) {
    area.querySelector(".gw-search__meta").textContent = text;
  }

  // Pagefind's excerpt: text with `<` and `>` escaped, and <mark>…</mark> around matches.
  function excerptNodes(excerpt) {
    var nodes = [];
    var marked = false;
    excerpt.split(/(<mark>|<\/mark>)/).forEach(function (part) {
      if (part === "<mark>") marked = true;
      else if (part === "</mark>") marked = false;
      else if (part) {
        var text = document.createTextNode(part.replace(/&lt;/g, "<").replace(/&gt;/g, ">"));
        if (marked) {
          var mark = document.createElement("mark");
          mark.append(text);
          nodes.push(mark);
        } else nodes.push(text);
      }
    });
    return nodes;
  }

  function item(data, score, query) {
    var meta = data.meta || {};
    var li = document.createElement("li");
    li.className = "md-search-result__item";
    var link = document.createElement("a");
    link.className = "md-search-result__link";
    var url = new URL(data.url, location.href);
    if (highlights()) url.searchParams.set("h", query);
    link.href = url.href;
    link.tabIndex = -1;
    var article = document.createElement("article");
    article.className = "md-search-result__article md-typeset";
    // Material's Enter follows the link whose article scores highest: the first one.
    article.setAttribute("data-md-score", String(score));
    var icon = document.createElement("div");
    icon.className = "md-search-result__icon md-icon";
    var title = document.createElement("h1");
    title.textContent = meta.title || data.url;
    article.append(icon, title);
    if (meta.summary) {
      var summary = document.createElement("p");
      summary.className = "gw-search__summary";
      summary.textContent = meta.summary;
      if (meta.derived) {
        summary.classList.add("gw-summary-derived");
        summary.title = "Derived: the first sentence of the page, which has no summary of its own";
      }
      article.append(summary);
    }
    if (data.excerpt) {
      var excerpt = document.createElement("p");
      excerpt.className = "gw-search__excerpt";
      excerpt.append.apply(excerpt, excerptNodes(data.excerpt));
      article.append(excerpt);
    }
    link.append(article);
    li.append(link);
    return li;
  }

  function show(area, pages, total, query) {
    var list = area.querySelector(".gw-search__list");
    list.replaceChildren.apply(
      list,
      pages.map(function (data, i) {
        return item(data, SHOWN - i, query);
      })
    );
    say(area, total === 0 ? "No matching documents" : total === 1 ? "1 matching document" : total + " matching documents");
  }

  function run(input, query, ticket) {
    var area = resultArea(input);
    if (!area) return;
    if (!query.trim()) {
      area.querySelector(".gw-search__list").replaceChildren();
      say(area, "");
      return;
    }
    var current = function () {
      return ticket === latest;
    };
    if (running) {
      // One search at a time; keys typed meanwhile wait, and only the newest is searched.
      // Searching each prefix of a word typed at once (`d`, `da`...) kept the worker busy
      // with the broadest queries, each loading index chunks, for a second on 6,571 pages.
      waiting = [input, query, ticket];
      return;
    }
    running = true;
    var done = function () {
      running = false;
      var next = waiting;
      waiting = null;
      if (next) run(next[0], next[1], next[2]);
    };
    pagefind()
      .then(function (pf) {
        return current() ? pf.search(query) : null;
      })
      .then(function (search) {
        if (!search || !current()) return null;
        var total = search.results.length;
        var all = search.results.slice(0, SHOWN).map(function (r) {
          return r.data();
        });
        if (!all.length) return show(area, [], 0, query);
        // The first result as soon as its fragment is in, then the others together.
        return all[0]
          .then(function (data) {
            if (current()) show(area, [data], total, query);
            return Promise.all(all);
          })
          .then(function (pages) {
            if (current()) show(area, pages, total, query);
          });
      })
      .catch(function () {
        if (!current()) return;
        area.querySelector(".gw-search__list").replaceChildren();
        say(area, "Search is not available yet: the index is being made. Try again in a moment.");
      })
      .then(done);
  }

  function isInput(target) {
    return target instanceof Element && target.matches(INPUT);
  }

  // Pagefind's module, its WebAssembly and its index's entry (tens of KB, not the index) are
  // fetched once the page is idle, so the reader's first query waits only for the index pieces
  // its words need; sooner when the box is about to be used: pointed at, or focused.
  function whenIdle() {
    if (window.requestIdleCallback) window.requestIdleCallback(pagefind, { timeout: 3000 });
    else setTimeout(pagefind, 1000);
  }
  if (document.readyState === "complete") whenIdle();
  else window.addEventListener("load", whenIdle, { once: true });
  ["focusin", "pointerover"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      var target = event.target;
      if (target instanceof Element && target.closest(".md-search, label[for=__search]")) pagefind();
    });
  });
  // Each key searches at once; an older query's results are dropped when they come late.
  document.addEventListener("input", function (event) {
    if (isInput(event.target)) run(event.target, event.target.value, ++latest);
  });
  // Material's reset button empties the box without an input event.
  document.addEventListener("reset", function (event) {
    var input = event.target instanceof Element && event.target.querySelector(INPUT);
    if (input) {
      var ticket = ++latest;
      setTimeout(function () {
        run(input, "", ticket);
      }, 0);
    }
  });
})();
