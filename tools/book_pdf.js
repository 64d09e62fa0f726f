// Turns the single-page build of the book (_build/singlehtml/book.html) into a book for paper.
// tools/book_pdf.py runs it in headless Chromium after MathJax has typeset the page, before
// printing. It returns what it did, so that the script can refuse a PDF it could not prepare.
//
//   - every solution moves to the end of its chapter, under "Solutions", complete and titled
//     "Solution to Exercise N", with its code shown and no toggle; its exercise says where it is;
//   - citations point at their own bibliography entry (the ids "id1", "id2"... of the
//     separate pages repeat on the single page, so a citation could land on another citation),
//     and the bibliography is labelled and ordered by author and year, as the text cites;
//   - links to the book's own page become links inside the PDF; links to other files of the
//     build (which a PDF reader would open as file:// URLs) become plain text;
//   - a contents with page numbers (placeholders that tools/book_pdf.py fills in after a
//     first printing has told it where each target landed);
//   - tables and displayed formulas wider than the column are scaled down to fit.
(() => {
  const norm = (t) => (t || "").replace(/\s+/g, " ").trim();
  const stats = { problems: [] };
  const article = document.querySelector("article.bd-article") || document.body;

  // The theme's own print contents (a list without page numbers) gives way to ours.
  document.getElementById("jb-print-docs-body")?.remove();

  // ---------------------------------------------------------------- the documents
  const docs = [...document.querySelectorAll('span[id^="document-"]')]
    .map((span) => ({ name: span.id.slice("document-".length), section: span.nextElementSibling }))
    .filter((d) => d.section && d.section.tagName === "SECTION");
  docs.forEach((d) => {
    d.section.classList.add("pdf-document");
    d.section.dataset.pdfDocument = d.name;
    d.chapter = /^chapters\/\d\d_/.test(d.name);
    if (d.chapter) d.section.classList.add("pdf-chapter");
    d.heading = d.section.querySelector(":scope > h2, :scope > h1");
  });
  const api = docs.find((d) => d.name.endsWith("/api"));
  if (api) api.section.classList.add("pdf-api");
  const bib = docs.find((d) => d.name.endsWith("/bibliography"));
  if (bib) bib.section.classList.add("pdf-bibliography");
  stats.documents = docs.length;
  stats.chapters = docs.filter((d) => d.chapter).length;

  // ---------------------------------------------------------------- solutions
  const headingText = (h) => norm([...h.childNodes]
    .filter((n) => !(n.classList && n.classList.contains("headerlink")))
    .map((n) => n.textContent).join(""));
  let moved = 0;
  const empty = [];
  docs.forEach((d) => {
    const boxes = [...d.section.querySelectorAll("div.exercise, div.solution")];
    const solutions = boxes.filter((b) => b.classList.contains("solution"));
    if (!solutions.length) return;
    const number = d.heading ? norm(d.heading.querySelector(".section-number")?.textContent)
      .replace(/\.$/, "") : "";
    const end = document.createElement("section");
    end.className = "pdf-solutions";
    end.id = `pdf-solutions-${d.name.replace(/\W/g, "-")}`;
    const h = document.createElement("h3");
    h.textContent = number ? `Solutions to the exercises of chapter ${number}` : "Solutions";
    end.appendChild(h);
    let exercise = null;
    boxes.forEach((box) => {
      if (box.classList.contains("exercise")) { exercise = box; return; }
      const title = exercise
        ? norm(exercise.querySelector(".admonition-title")?.textContent) : "";
      const id = `pdf-solution-${exercise && exercise.id ? exercise.id : box.id}`.replace(/[^\w-]/g, "-");
      const item = document.createElement("section");
      item.className = "pdf-solution";
      item.id = id;
      const h4 = document.createElement("h4");
      h4.textContent = title ? `Solution to ${title}` : "Solution";
      item.appendChild(h4);
      const content = box.querySelector(":scope > section") || box;
      [...content.childNodes].forEach((n) => {
        if (n.classList && n.classList.contains("admonition-title")) return;
        item.appendChild(n);
      });
      // Code hidden behind a toggle on the site is the solution itself: shown, no toggle.
      item.querySelectorAll("details").forEach((det) => {
        det.querySelector(":scope > summary")?.remove();
        const div = document.createElement("div");
        div.className = "pdf-shown";
        [...det.childNodes].forEach((n) => div.appendChild(n));
        det.replaceWith(div);
      });
      const text = norm(item.textContent).length - h4.textContent.length;
      if (text < 40 && !item.querySelector("pre, img, mjx-container")) empty.push(h4.textContent);
      end.appendChild(item);
      if (exercise) {
        const ref = document.createElement("p");
        ref.className = "pdf-solution-ref";
        ref.innerHTML = `The solution is at the end of the chapter, <a href="#${id}">page `
          + `<span class="pdf-page" data-target="${id}">000</span></a>.`;
        (exercise.querySelector(":scope > section") || exercise).appendChild(ref);
      }
      box.remove();
      moved += 1;
    });
    // After everything the chapter says, before the next document starts.
    d.section.appendChild(end);
  });
  stats.solutions = moved;
  stats.empty_solutions = empty;
  stats.solutions_left = document.querySelectorAll("div.solution").length;

  // Outside solutions the code that the site hides behind a toggle (plotting code) is left out.
  document.querySelectorAll("details.above-input").forEach((det) => det.remove());
  // Any other collapsed block is printed open, without its toggle.
  document.querySelectorAll("details").forEach((det) => { det.open = true; });
  // Cells whose input and output are both gone would print as empty frames.
  document.querySelectorAll("div.cell").forEach((cell) => {
    if (!norm(cell.textContent) && !cell.querySelector("img, svg, mjx-container, table")) {
      cell.remove();
    }
  });

  // ---------------------------------------------------------------- citations, bibliography
  const entries = [...document.querySelectorAll('div.citation[role="doc-biblioentry"]')];
  const byText = new Map(entries.map((e) => [norm(e.querySelector("p")?.textContent), e]));
  const findEntry = (title) => {
    const t = norm(title);
    if (byText.has(t)) return byText.get(t);
    for (const [text, e] of byText) if (text.startsWith(t) || t.startsWith(text)) return e;
    return null;
  };
  const labels = new Map(); // entry id -> "Author et al., 2018"
  let cited = 0;
  const unmatched = [];
  document.querySelectorAll("span.bibtex-citation").forEach((span) => {
    const links = [...span.querySelectorAll("a[title]")];
    links.forEach((a) => {
      const entry = findEntry(a.getAttribute("title"));
      if (!entry) { unmatched.push(norm(a.textContent)); return; }
      a.setAttribute("href", `#${entry.id}`);
      cited += 1;
      const m = norm(a.textContent).match(/^(.+), (\d{4}[a-z]?)$/);
      if (m && !labels.has(entry.id)) labels.set(entry.id, `${m[1]}, ${m[2]}`);
    });
    // {cite:t}: "Author et al. [2018]", the name and the year as two links to one entry,
    // or the name as plain text before a bracketed year that alone is a link.
    const last = links[links.length - 1];
    const year = last ? norm(last.textContent) : "";
    const entry = last && /^\d{4}[a-z]?$/.test(year) && findEntry(last.getAttribute("title"));
    if (entry && !labels.has(entry.id)) {
      if (links.length === 2 && links[0].getAttribute("title") === last.getAttribute("title")) {
        labels.set(entry.id, `${norm(links[0].textContent)}, ${year}`);
      } else if (links.length === 1) {
        const name = norm(span.textContent.split("[")[0]);
        if (name) labels.set(entry.id, `${name}, ${year}`);
      }
    }
  });
  stats.citations = cited;
  stats.unmatched_citations = unmatched;
  const unlabelled = [];
  entries.forEach((e) => {
    const label = e.querySelector(".label");
    if (!labels.has(e.id)) { unlabelled.push(norm(e.textContent).slice(0, 60)); return; }
    if (label) label.textContent = labels.get(e.id);
  });
  stats.unlabelled_entries = unlabelled;
  const list = entries[0]?.parentElement;
  if (list) {
    const key = (e) => (labels.get(e.id) || norm(e.textContent)).toLowerCase();
    entries.slice().sort((a, b) => key(a).localeCompare(key(b), "en"))
      .forEach((e) => list.appendChild(e));
    list.classList.add("pdf-author-year");
  }

  // ---------------------------------------------------------------- links
  const here = new URL(document.baseURI);
  const dir = here.pathname.replace(/[^/]*$/, "");
  let internal = 0;
  const unwrapped = [];
  const missing = [];
  document.querySelectorAll("a[href]").forEach((a) => {
    const raw = a.getAttribute("href");
    if (raw.startsWith("#")) return;
    const url = new URL(raw, here);
    if (url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:") return;
    // The single page is the root document's page (index.html), copied to book.html beside
    // it: a link to either, with a fragment, is a link inside the book.
    if (url.protocol === "file:" && url.hash && url.pathname.startsWith(dir)
        && ["index.html", "book.html"].includes(url.pathname.slice(dir.length))) {
      a.setAttribute("href", url.hash);
      internal += 1;
      return;
    }
    unwrapped.push(raw);
    const span = document.createElement("span");
    span.className = "pdf-unlinked";
    span.append(...a.childNodes);
    a.replaceWith(span);
  });
  document.querySelectorAll('a[href^="#"]').forEach((a) => {
    const id = decodeURIComponent(a.getAttribute("href").slice(1));
    if (id && !document.getElementById(id)) missing.push(id);
  });
  stats.internal_links = internal;
  stats.unlinked = unwrapped;
  stats.missing_targets = [...new Set(missing)];

  // ---------------------------------------------------------------- contents
  const nav = document.createElement("nav");
  nav.id = "pdf-contents";
  const navTitle = document.createElement("h2");
  navTitle.innerHTML = '<a class="pdf-self" href="#pdf-contents">Contents</a>';
  nav.appendChild(navTitle);
  const ul = document.createElement("ul");
  const add = (target, text, level) => {
    if (!target.id) return;
    const li = document.createElement("li");
    li.className = `pdf-toc-${level}`;
    li.innerHTML = `<a href="#${target.id}"><span class="pdf-toc-text"></span>`
      + `<span class="pdf-page" data-target="${target.id}">000</span></a>`;
    li.querySelector(".pdf-toc-text").textContent = text;
    ul.appendChild(li);
  };
  docs.forEach((d) => {
    if (!d.heading) return;
    add(d.section, headingText(d.heading), 1);
    if (!d.chapter) return;
    d.section.querySelectorAll(":scope > section").forEach((s) => {
      const h = s.querySelector(":scope > h3");
      if (h) add(s, headingText(h), 2);
    });
  });
  nav.appendChild(ul);
  const h1 = article.querySelector("h1");
  if (h1) h1.after(nav); else article.prepend(nav);
  stats.contents_entries = ul.children.length;

  // ---------------------------------------------------------------- bookmarks
  // The outline tools/book_pdf.py writes: the contents' entries, each solution and the API
  // reference's groups. Each heading links to itself, so that Chromium writes a named
  // destination for it (the script reads the pages and positions from those).
  const outline = [];
  const mark = (target, title, level) => {
    if (!target.id) return;
    outline.push({ id: target.id, title, level });
    const h = target.matches("h1, h2, h3, h4") ? target
      : target.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4");
    if (h && !h.querySelector("a.pdf-self")) {
      const a = document.createElement("a");
      a.className = "pdf-self";
      a.setAttribute("href", `#${target.id}`);
      [...h.childNodes].forEach((n) => a.appendChild(n));
      h.appendChild(a);
    }
  };
  const landing = h1 ? h1.closest("section") : null;
  if (landing) mark(landing, norm(headingText(h1)), 1);
  outline.push({ id: nav.id, title: "Contents", level: 1 });
  docs.forEach((d) => {
    if (!d.heading) return;
    mark(d.section, headingText(d.heading), 1);
    d.section.querySelectorAll(":scope > section").forEach((s) => {
      const h = s.querySelector(":scope > h3");
      if (!h) return;
      mark(s, headingText(h), 2);
      s.querySelectorAll(":scope > section.pdf-solution").forEach((item) => {
        mark(item, norm(item.querySelector("h4")?.textContent), 3);
      });
    });
  });
  stats.outline = outline;
  return stats;
})();
