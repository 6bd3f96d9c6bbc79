from inventory.rule_examples import render_markdown

print(render_markdown())
