// The script of a small Streamlit component (components v2), loaded by ui/shell/page_lang.py (the page's language).
export default function ({ data }) {
  if (document.documentElement.lang !== data.lang) document.documentElement.lang = data.lang;
}
