"""The window's stylesheet: quiet surfaces, readable bubbles, one accent colour.

Only the custom pieces are styled (bubbles, cards, header, status line); standard widgets
keep the platform's look.
"""

from __future__ import annotations

ACCENT = "#2f6fde"

STYLESHEET = f"""
#sidebar {{ background: palette(window); }}
#toolbar {{ spacing: 4px; padding: 3px 8px; border-bottom: 1px solid palette(midlight); }}
#toolbar QToolButton {{
    padding: 4px 10px;
    border: 1px solid transparent;
    border-radius: 6px;
}}
#toolbar QToolButton:hover {{ background: palette(midlight); }}
#toolbar QToolButton:pressed {{ background: palette(mid); }}
#toolbar QToolButton:disabled {{ color: palette(mid); }}
#bannerBox {{ background: palette(base); }}
#sessionList {{
    border: none;
    background: palette(base);
    border-radius: 8px;
    outline: 0;
}}
#sessionList::item:hover {{ background: palette(alternate-base); border-radius: 6px; }}
#sessionList::item:selected {{ background: {ACCENT}; border-radius: 6px; }}
#sessionList:focus {{ border: 1px solid palette(highlight); }}
#sidebarEmpty {{ color: palette(mid); font-size: 10.5pt; padding: 24px; }}
#filter {{ padding: 5px 8px; border-radius: 6px; }}
#paneHeader {{ border-bottom: 1px solid palette(midlight); background: palette(base); }}
#paneTitle {{ font-size: 15pt; font-weight: 600; }}
#paneSubtitle {{ color: palette(mid); }}
#conversationPane, #transcript, #transcriptScroll {{ background: palette(base); }}
#emptyState {{ color: palette(mid); font-size: 11pt; background: palette(base); }}
#banner {{
    background: #fff4e5;
    color: #6b3d00;
    border: 1px solid #f0c36d;
    border-radius: 6px;
    padding: 8px 10px;
}}
#userBubble {{ background: {ACCENT}; border-radius: 12px; }}
#userBubble QLabel {{ color: white; }}
#assistantBubble {{ background: #eef0f4; border-radius: 12px; }}
#assistantBubble QLabel {{ color: #1d2330; }}
#toolCard, #approvalCard, #artifactCard {{
    border: 1px solid #d5d9e0;
    border-radius: 8px;
    background: #fafbfc;
}}
#approvalCard {{ border-color: #e3b341; background: #fffaf0; }}
#cardHeading {{ font-weight: 600; color: #1d2330; }}
#cardDetail {{ color: #4a5261; }}
#toolOutput {{ font-family: monospace; color: #333a46; }}
#note {{ color: #6b7280; font-style: italic; }}
#errorNote {{ color: #b42318; }}
#composerBar {{ border-top: 1px solid palette(midlight); background: palette(window); }}
#composer {{
    border: 1px solid palette(mid);
    border-radius: 8px;
    padding: 4px;
    background: palette(base);
}}
#sendButton, #stopButton {{ min-width: 76px; padding: 6px 12px; }}
#syncStatus {{ color: palette(dark); padding: 2px 6px; }}
#syncStatus[error="true"] {{ color: #b42318; }}
"""
