//! A tiny document builder with two outputs: Markdown (math between `$`, as GitHub renders it)
//! and a LaTeX fragment to paste into an appendix. Math is written once, in LaTeX syntax; text
//! goes through [`Doc::text`] so that LaTeX's special characters are escaped.

/// Output format of an explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// GitHub-flavoured Markdown with `$...$` math.
    Markdown,
    /// A LaTeX fragment (no preamble): `\subsection*`, `itemize`, `$...$`.
    Latex,
}

/// The document being written.
pub struct Doc {
    style: Style,
    out: String,
    in_list: bool,
}

impl Doc {
    /// An empty document.
    pub fn new(style: Style) -> Doc {
        Doc {
            style,
            out: String::new(),
            in_list: false,
        }
    }

    /// Escapes plain text for the output (file names, methods, commands).
    pub fn text(&self, s: &str) -> String {
        match self.style {
            Style::Markdown => s.to_string(),
            Style::Latex => {
                let mut o = String::with_capacity(s.len());
                for c in s.chars() {
                    match c {
                        '\\' => o += "\\textbackslash{}",
                        '{' | '}' | '_' | '&' | '%' | '$' | '#' => {
                            o.push('\\');
                            o.push(c);
                        }
                        '^' => o += "\\textasciicircum{}",
                        '~' => o += "\\textasciitilde{}",
                        _ => o.push(c),
                    }
                }
                o
            }
        }
    }

    /// Verbatim-looking text: code spans in Markdown, `\texttt` in LaTeX.
    pub fn code(&self, s: &str) -> String {
        match self.style {
            Style::Markdown => format!("`{s}`"),
            Style::Latex => format!("\\texttt{{{}}}", self.text(s)),
        }
    }

    fn close_list(&mut self) {
        if self.in_list {
            if self.style == Style::Latex {
                self.out += "\\end{itemize}\n";
            }
            self.out.push('\n');
            self.in_list = false;
        }
    }

    /// A section title.
    pub fn title(&mut self, s: &str) {
        self.close_list();
        match self.style {
            Style::Markdown => self.out += &format!("## {s}\n\n"),
            Style::Latex => self.out += &format!("\\subsection*{{{s}}}\n\n"),
        }
    }

    /// A subsection title.
    pub fn heading(&mut self, s: &str) {
        self.close_list();
        match self.style {
            Style::Markdown => self.out += &format!("### {s}\n\n"),
            Style::Latex => self.out += &format!("\\paragraph{{{s}}}\n"),
        }
    }

    /// A paragraph (already escaped; inline math between `$`).
    pub fn para(&mut self, s: &str) {
        self.close_list();
        self.out += s;
        self.out += "\n\n";
    }

    /// A displayed formula (LaTeX math syntax).
    pub fn display(&mut self, math: &str) {
        self.close_list();
        match self.style {
            Style::Markdown => self.out += &format!("$$\n{math}\n$$\n\n"),
            Style::Latex => self.out += &format!("\\[\n{math}\n\\]\n\n"),
        }
    }

    /// A list item (already escaped); consecutive items form one list.
    pub fn item(&mut self, s: &str) {
        if !self.in_list {
            if self.style == Style::Latex {
                self.out += "\\begin{itemize}\n";
            }
            self.in_list = true;
        }
        match self.style {
            Style::Markdown => self.out += &format!("- {s}\n"),
            Style::Latex => self.out += &format!("\\item {s}\n"),
        }
    }

    /// Ends any open list; the next items start a new one.
    pub fn end_list(&mut self) {
        self.close_list();
    }

    /// The finished text.
    pub fn finish(mut self) -> String {
        self.close_list();
        self.out
    }
}
