import Crypto
import Foundation

/// The markup of a review page: the stylesheet, the one inline script, the head with its content
/// security policy, and tiles. Every untrusted string goes through ``HTMLText/escaped(_:)``; image
/// paths are `img/<sha256>.gif` (``ReviewImages``); nothing from the API becomes a URL.
///
/// The policy allows images and the stylesheet from the page's own folder and only the inline
/// script whose SHA-256 it names: no request leaves the folder, and a script that got into the
/// page some other way would not run. The script (the animation on hover or click, its GIF fetched
/// only then; the body-part filter; the load time in `data-load-ms`) never touches `#no-script-marker`, which only an injected
/// script would change.
enum ReviewMarkup {
    static let stylesheetName = "review.css"
    static let marker = #"<p id="no-script-marker" class="marker">no injected script ran</p>"#

    static let script = """
        (function(){var d=document.documentElement;d.setAttribute('data-page-script','ran');\
        addEventListener('load',function(){d.setAttribute('data-load-ms',String(Math.round(performance.now())));});\
        function link(e){return e.target.closest?e.target.closest('a.play'):null;}\
        function play(a,on){var i=a.querySelector('img.anim');if(on&&!i){i=document.createElement('img');i.className='anim';i.alt='';\
        i.src=a.getAttribute('href');a.appendChild(i);}a.classList.toggle('playing',on);}\
        document.addEventListener('mouseover',function(e){var a=link(e);if(a)play(a,true);});\
        document.addEventListener('mouseout',function(e){var a=link(e);if(a&&!a.contains(e.relatedTarget)&&!a.classList.contains('pinned'))play(a,false);});\
        document.addEventListener('click',function(e){var a=link(e);if(a){e.preventDefault();play(a,a.classList.toggle('pinned'));}});\
        var f=document.getElementById('body-filter');if(f){f.hidden=false;f.querySelector('select').addEventListener('change',function(e){\
        var v=e.target.value;document.querySelectorAll('.tile').forEach(function(t){t.hidden=v!==''&&t.getAttribute('data-body')!==v;});});}})();
        """

    static var scriptHash: String { Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString() }

    static func head(title: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self'; style-src 'self'; \
        script-src 'sha256-\(scriptHash)'; base-uri 'none'; form-action 'none'">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>\(HTMLText.escaped(title))</title>
        <link rel="stylesheet" href="\(stylesheetName)">
        </head><body>
        \(marker)

        """
    }

    static var foot: String { "<script>\(script)</script>\n</body></html>\n" }

    /// The body-part filter of a page of tiles (hidden until the script shows it).
    static func bodyFilter(_ bodyParts: [String]) -> String {
        guard !bodyParts.isEmpty else { return "" }
        let options = bodyParts.map { "<option value=\"\(HTMLText.escaped($0))\">\(HTMLText.escaped($0))</option>" }.joined()
        return "<p id=\"body-filter\" hidden><label>Body part <select><option value=\"\">all</option>\(options)</select></label></p>\n"
    }

    /// One side of a tile (before or after): the poster (the animation over it on hover or
    /// click), the BlurHash, size, frames and bytes.
    struct Side {
        var label: String
        var gif: String?
        var poster: String?
        var blurHash: String?
        var metadata: GIFMetadata?
        /// The WebP rendition beside the GIF (format 1.4), when the release has one.
        var webp: String? = nil
        /// Why there is no picture (no GIF, pack file not at hand).
        var note: String?
    }

    static func tile(kind: String, exercise: ReviewExercise, sides: [Side], reasons: [String] = []) -> String {
        var html =
            "<article class=\"tile \(kind)\" data-id=\"\(HTMLText.escaped(exercise.id))\" data-pack=\""
            + HTMLText.escaped(exercise.pack) + "\" data-body=\"\(HTMLText.escaped(exercise.bodyPart ?? ""))\">"
        html += "<div class=\"sides\">" + sides.map(side).joined() + "</div>"
        html += "<h3 class=\"name\">\(HTMLText.escaped(exercise.name ?? "(name not at hand)"))</h3>"
        html +=
            "<p class=\"facts\"><code class=\"id\">\(HTMLText.escaped(exercise.id))</code> · <span class=\"body\">"
            + HTMLText.escaped(exercise.bodyPart ?? "—") + "</span> · <span class=\"pack\">\(HTMLText.escaped(exercise.pack))</span></p>"
        if !reasons.isEmpty {
            html += "<ul class=\"reasons\">" + reasons.map { "<li>\(HTMLText.escaped($0))</li>" }.joined() + "</ul>"
        }
        return html + "</article>\n"
    }

    private static func side(_ side: Side) -> String {
        var html = "<figure class=\"side\" data-side=\"\(side.label)\"><div class=\"frame\">"
        if let poster = side.poster, let gif = side.gif {
            // The animation is fetched only when asked for: on hover or click (the script), or by
            // following the link to the GIF (no script).
            html += "<a class=\"play\" href=\"\(gif)\" title=\"play\"><img class=\"poster\" src=\"\(poster)\" alt=\"\" loading=\"lazy\"></a>"
        } else if let still = side.poster ?? side.gif {
            html += "<img class=\"poster\" src=\"\(still)\" alt=\"\" loading=\"lazy\">"
        } else {
            html += "<span class=\"note\">\(HTMLText.escaped(side.note ?? "no picture"))</span>"
        }
        html += "</div>"
        if let webp = side.webp {
            // The WebP rendition beside its GIF: what an app that prefers WebP shows.
            html += "<div class=\"frame webp\"><img class=\"webp\" src=\"\(webp)\" alt=\"WebP\" title=\"WebP rendition\" loading=\"lazy\"></div>"
        }
        html += "<figcaption><span class=\"label\">\(side.label)</span>"
        if let blurHash = side.blurHash { html += " <img class=\"blur\" src=\"\(blurHash)\" alt=\"BlurHash\" title=\"BlurHash\" loading=\"lazy\">" }
        if let gif = side.metadata {
            html += " <span class=\"meta\">\(gif.width)×\(gif.height) · \(gif.frames) frames · \(HTMLText.bytes(gif.bytes))</span>"
        }
        return html + "</figcaption></figure>"
    }

    /// "1–120 of 1,324" and links to the previous and next page.
    static func pager(page: Int, pages: Int, total: Int, pageSize: Int, name: (Int) -> String) -> String {
        let first = (page - 1) * pageSize + 1
        let last = min(total, page * pageSize)
        var html = "<nav class=\"pager\"><a href=\"index.html\">summary</a> · tiles \(first)–\(last) of \(total)"
        if page > 1 { html += " · <a rel=\"prev\" href=\"\(name(page - 1))\">previous</a>" }
        if page < pages { html += " · <a rel=\"next\" href=\"\(name(page + 1))\">next</a>" }
        return html + " · page \(page) of \(pages)</nav>\n"
    }

    static let stylesheet = """
        :root{color-scheme:light dark;--line:#8884;--tile:14rem}
        body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;max-width:120rem}
        h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin:1.6rem 0 .6rem;border-bottom:1px solid var(--line)}
        table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.2rem .6rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
        td.num{text-align:right;font-variant-numeric:tabular-nums}
        .marker{position:absolute;left:-9999px}
        .counts{display:flex;gap:1rem;flex-wrap:wrap;padding:0;list-style:none}.counts li{border:1px solid var(--line);border-radius:.4rem;padding:.4rem .8rem}
        .counts b{font-size:1.3rem;display:block}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(var(--tile),1fr));gap:.8rem}
        .tile{border:1px solid var(--line);border-radius:.5rem;padding:.5rem;overflow:hidden}
        .tile.changed{grid-column:span 2}.tile[hidden]{display:none}
        .sides{display:flex;gap:.5rem}.side{margin:0;flex:1;min-width:0}
        .frame{position:relative;aspect-ratio:1;background:#8882;border-radius:.3rem;display:flex;align-items:center;justify-content:center;overflow:hidden}
        .frame img{width:100%;height:100%;object-fit:contain;image-rendering:auto}
        .play{display:block;position:relative;width:100%;height:100%}
        .frame .anim{display:none;position:absolute;inset:0}
        .play.playing .anim{display:block}
        .note{padding:.5rem;text-align:center;font-size:.85rem;opacity:.8}
        figcaption{font-size:.78rem;display:flex;gap:.3rem;align-items:center;flex-wrap:wrap;margin-top:.25rem}
        .label{font-weight:600}.blur{width:1.6rem;height:1.6rem;border-radius:.2rem}
        .name{font-size:.95rem;margin:.4rem 0 .1rem;overflow-wrap:anywhere}.facts{margin:0;font-size:.8rem;opacity:.85;overflow-wrap:anywhere}
        .reasons{margin:.3rem 0 0;padding-left:1rem;font-size:.8rem;color:#c40}
        .more{margin:.6rem 0}.pager{margin:.6rem 0}.problems li{color:#c40}

        """
}
