"""The "what differs" sections (`sections`): each lesson, on a model that departs from the Llama
recipe (Gemma 3), shows the difference computed from the loaded model, drawn by `figures` where the
server draws a chart.
"""
