"""Sentiment classification and text-to-image with models compiled ahead of time by Optimum Neuron.

The export arguments fix the input shapes at compile time: every request is padded to them.
"""

import argparse

from transformers import AutoTokenizer

from optimum.neuron import NeuronModelForSequenceClassification, NeuronStableDiffusionPipeline

MODEL_ID = "distilbert-base-uncased-finetuned-sst-2-english"


def classify(texts: list[str]) -> list[str]:
    tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
    model = NeuronModelForSequenceClassification.from_pretrained(
        MODEL_ID,
        export=True,
        batch_size=1,
        sequence_length=128,
        auto_cast_type="bf16",  # compile in bf16
    )
    labels = []
    for text in texts:
        inputs = tokenizer(text, padding="max_length", max_length=128, return_tensors="pt")
        logits = model(**inputs).logits
        labels.append(model.config.id2label[int(logits.argmax(-1))])
    return labels


def draw(prompt: str, out: str) -> None:
    pipe = NeuronStableDiffusionPipeline.from_pretrained(
        "stabilityai/stable-diffusion-2-1-base", export=True, batch_size=1, height=512, width=512
    )
    pipe(prompt).images[0].save(out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("texts", nargs="*", default=["a wonderful day", "a terrible movie"])
    parser.add_argument("--draw", help="also render this prompt to image.png")
    args = parser.parse_args()
    print(classify(args.texts))
    if args.draw:
        draw(args.draw, "image.png")
