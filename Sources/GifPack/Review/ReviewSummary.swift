import GifPackSystem

/// `index.html`: the summary and the first tiles of each section (``ReviewWriter``).
extension ReviewWriter {
    func writeIndex() throws(FileSystemError) {
        try writePage("index.html", title: "Release review") { sink throws(FileSystemError) in
            try sink.append(
                "<header><h1>Release review</h1><p class=\"lead\">\(HTMLText.escaped(new.location))"
                    + (old.map { " against \(HTMLText.escaped($0.location))" } ?? " — a first release (nothing to compare with)")
                    + "</p></header>\n")
            try sink.append(releaseTable() + countList() + packTable() + downloadLine())
            let problems = self.problems
            if !problems.isEmpty {
                try sink.append(
                    "<h2 id=\"problems\">Not shown <span class=\"count\">\(problems.count)</span></h2><ul class=\"problems\">"
                        + problems.prefix(200).map { "<li>\(HTMLText.escaped($0))</li>" }.joined()
                        + (problems.count > 200 ? "<li>… \(problems.count - 200) more</li>" : "") + "</ul>\n")
            }
            for section in ReviewSection.allCases { try appendSection(section, to: sink) }
            try sink.append(galleryList())
        }
    }

    private func appendSection(_ section: ReviewSection, to sink: PageSink) throws(FileSystemError) {
        let total = count(section)
        try sink.append(
            "<section id=\"\(section.rawValue)\" class=\"changes\" data-count=\"\(total)\"><h2>\(section.title) "
                + "<span class=\"count\">\(total)</span></h2>\n")
        if total == 0 {
            try sink.append("<p class=\"none\">none</p></section>\n")
            return
        }
        try sink.append("<div class=\"grid\">\n")
        try spools[section]?.read(limit: options.inlineTiles) { html, _ throws(FileSystemError) in try sink.append(html) }
        try sink.append("</div>\n<p class=\"more\"><a href=\"\(section.pageName(1))\">all \(total) on their own pages →</a></p></section>\n")
    }

    private func releaseTable() -> String {
        func row(_ label: String, _ value: (ReviewRelease) -> String) -> String {
            "<tr><th>\(label)</th><td>\(old.map { HTMLText.escaped(value($0)) } ?? "—")</td><td>\(HTMLText.escaped(value(new)))</td></tr>"
        }
        return "<table class=\"release\"><tr><th></th><th>before</th><th>after</th></tr>"
            + row("index") { $0.location }
            + row("format") { "\($0.index.formatVersion)" }
            + row("generator") { $0.index.generator }
            + row("sequence") { $0.index.sequence.map(String.init) ?? "— (unsigned)" }
            + row("signer") { $0.signer }
            + row("expires") { $0.index.expires ?? "—" }
            + row("packs") { "\($0.index.packs.count)" }
            + "<tr><th>exercises</th><td>\(old == nil ? "—" : "\(diff.exercisesBefore)")</td><td>\(diff.exercisesAfter)</td></tr>"
            + "</table>\n"
    }

    private func countList() -> String {
        "<ul class=\"counts\">"
            + ReviewSection.allCases.map { section in
                "<li><a href=\"#\(section.rawValue)\">\(section.title)<b data-count=\"\(section.rawValue)\">\(count(section))</b></a></li>"
            }.joined() + "</ul>\n"
    }

    /// Bytes per pack (and posters pack) before and after.
    private func packTable() -> String {
        struct Row { var name: String; var old: (Int, Int64)?; var new: (Int, Int64)? }
        var rows: [String: Row] = [:]
        func add(_ name: String, version: Int, bytes: Int64, isNew: Bool) {
            var row = rows[name] ?? Row(name: name)
            if isNew { row.new = (version, bytes) } else { row.old = (version, bytes) }
            rows[name] = row
        }
        for (index, isNew) in [(old?.index, false), (Optional(new.index), true)] {
            for pack in index?.packs ?? [] {
                add(pack.name, version: pack.version, bytes: pack.bytes, isNew: isNew)
                if let posters = pack.posters { add(posters.name, version: posters.version, bytes: posters.bytes, isNew: isNew) }
            }
        }
        func cell(_ value: (Int, Int64)?) -> String {
            value.map { "<td>v\($0.0)</td><td class=\"num\">\(HTMLText.bytes($0.1))</td>" } ?? "<td>—</td><td class=\"num\">—</td>"
        }
        let body = rows.keys.sorted().map { name in
            let row = rows[name]!
            let change = (row.new?.1 ?? 0) - (row.old?.1 ?? 0)
            return "<tr data-pack=\"\(HTMLText.escaped(name))\"><th>\(HTMLText.escaped(name))</th>" + cell(row.old) + cell(row.new)
                + "<td class=\"num\">\(HTMLText.delta(change))</td></tr>"
        }.joined()
        return "<h2 id=\"packs\">Packs</h2><table class=\"packs\"><tr><th>pack</th><th colspan=\"2\">before</th><th colspan=\"2\">after</th>"
            + "<th>change</th></tr>\(body)</table>\n"
    }

    private func downloadLine() -> String {
        let names = diff.downloads.map { HTMLText.escaped($0.name) }.joined(separator: ", ")
        return "<p class=\"download\" data-download-bytes=\"\(diff.downloadBytes)\">An app's upgrade downloads "
            + "<b>\(HTMLText.bytes(diff.downloadBytes))</b> in \(diff.downloads.count) pack(s)\(names.isEmpty ? "" : ": \(names)")"
            + (diff.removedPacks.isEmpty ? "" : "; packs removed: \(diff.removedPacks.map(HTMLText.escaped).joined(separator: ", "))")
            + ". An app reading single GIFs instead fetches \(HTMLText.bytes(diff.newGIFFrameBytes)) of new GIF frames.</p>\n"
    }

    private func galleryList() -> String {
        let links = new.index.packs.enumerated().map { number, pack in
            pack.exercises.isEmpty
                ? "<li>\(HTMLText.escaped(pack.name)) (no exercises)</li>"
                : "<li><a href=\"gallery-\(number + 1)-1.html\">\(HTMLText.escaped(pack.name))</a> (\(pack.exercises.count) exercises)</li>"
        }.joined()
        return "<h2 id=\"gallery\">Gallery of the new version</h2><p>By pack, filtered by body part on each page:</p><ul>\(links)</ul>\n"
    }
}
