(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var chunks = {};
  function chunk(id) {  // a promise of the chunk's drawings (gzip, base64, JSON)
    if (!(id in chunks)) {
      var binary = atob(document.getElementById("chunk-" + id).textContent.trim());
      var bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i += 1) { bytes[i] = binary.charCodeAt(i); }
      var text = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      chunks[id] = new Response(text).text().then(JSON.parse);
    }
    return chunks[id];
  }
  function svgEl(name, attrs, parent) {
    var element = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (key) { element.setAttribute(key, attrs[key]); });
    if (parent) { parent.appendChild(element); }
    return element;
  }
  function htmlEl(name, text, parent) {
    var element = document.createElement(name);
    if (text !== undefined && text !== null) { element.textContent = String(text); }
    if (parent) { parent.appendChild(element); }
    return element;
  }
  function drawTree(tree, caption, onlyHere) {
    var figure = htmlEl("figure");
    htmlEl("figcaption", caption, figure);
    var svg = svgEl("svg", {"class": "tree", width: tree.w + 2, height: tree.h + 2,
                            viewBox: "-1 -1 " + (tree.w + 2) + " " + (tree.h + 2)}, figure);
    tree.edges.forEach(function (e) { svgEl("line", {x1: e[0], y1: e[1], x2: e[2], y2: e[3]}, svg); });
    tree.boxes.forEach(function (box) {
      var group = svgEl("g", {}, svg);
      svgEl("title", {}, group).textContent = box[0];
      svgEl("rect", {x: box[2], y: box[3], width: box[4], height: box[5], rx: 4,
                     "class": box[6] ? "only" : ""}, group);
      box[1].forEach(function (line, index) {
        var text = svgEl("text", {x: box[2] + 6, y: box[3] + 6 + 14 * (index + 1) - 3,
                                  "class": index === 0 ? "name" : ""}, group);
        text.textContent = line;
      });
    });
    if (onlyHere) { htmlEl("div", onlyHere, figure).className = "legend"; }
    return figure;
  }
  function movesTable(moves, parent) {
    if (!moves.length) { htmlEl("p", "No allocation moves.", parent); return; }
    var table = htmlEl("table", null, parent);
    var head = htmlEl("tr", null, table);
    ["consumer", "class", "amount", "from", "to", "shim"].forEach(function (name) {
      htmlEl("th", name, head);
    });
    moves.forEach(function (m) {
      var row = htmlEl("tr", null, table);
      [m[0], m[6] ? m[6] + " \u2192 " + m[1] : m[1], m[2], m[3] === null ? "(created)" : m[3],
       m[4], m[5]].forEach(function (value) { htmlEl("td", value, row); });
    });
  }
  function expand(node) {
    if (node.dataset.drawn) { return; }
    node.dataset.drawn = "1";
    chunk(node.dataset.c).then(function (records) {
      draw(node, records[Number(node.dataset.k)]);
    }).catch(function (error) {
      htmlEl("p", "This node's drawing could not be read: " + error, node.querySelector(".body"));
    });
  }
  function draw(node, record) {
    var body = node.querySelector(".body");
    if (!record) { htmlEl("p", "The run did not plan this node: no tree to draw.", body); return; }
    var trees = htmlEl("div", null, body);
    trees.className = "trees";
    trees.appendChild(drawTree(record.before, "before", "highlighted: gone after"));
    trees.appendChild(drawTree(record.after, "after (" + node.dataset.after + ")",
                               "highlighted: new"));
    htmlEl("h3", "Allocations moved", body);
    movesTable(record.moves, body);
    htmlEl("h3", "Plan", body);
    var plan = htmlEl("pre", record.plan.length ? record.plan.join("\n") : "nothing to write", body);
    plan.className = "plan";
  }
  document.addEventListener("toggle", function (event) {
    var target = event.target;
    if (target.classList && target.classList.contains("node") && target.open) { expand(target); }
  }, true);
  var host = document.getElementById("f-host");
  var status = document.getElementById("f-status");
  var kind = document.getElementById("f-kind");
  var shown = document.getElementById("f-shown");
  var nodes = Array.prototype.slice.call(document.querySelectorAll("details.node"));
  function apply() {
    var wanted = host.value.trim().toLowerCase();
    var count = 0;
    nodes.forEach(function (node) {
      var ok = (!wanted || node.dataset.host.indexOf(wanted) >= 0) &&
        (!status.value || node.dataset.status === status.value) &&
        (!kind.value || (" " + node.dataset.kinds + " ").indexOf(" " + kind.value + " ") >= 0);
      node.hidden = !ok;
      if (ok) { count += 1; }
    });
    shown.textContent = String(count);
  }
  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(apply, 120); }
  host.addEventListener("input", later);
  status.addEventListener("change", apply);
  kind.addEventListener("change", apply);
  shown.textContent = String(nodes.length);
}());
