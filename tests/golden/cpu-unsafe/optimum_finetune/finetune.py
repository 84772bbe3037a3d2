"""LoRA fine-tuning of a small causal LM on Trainium with Optimum Neuron.

Launch (XLA era):  torchrun --nproc_per_node=32 finetune.py --model Qwen/Qwen3-1.7B
"""

from dataclasses import dataclass, field

from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoTokenizer, HfArgumentParser, TrainingArguments

from optimum.neuron.models.training import NeuronModelForCausalLM
from optimum.neuron.utils import is_main_worker
from trl import SFTConfig, SFTTrainer


@dataclass
class ScriptArguments:
    model: str = field(default="Qwen/Qwen3-1.7B")
    dataset: str = field(default="databricks/databricks-dolly-15k")
    max_seq_length: int = field(default=1024)


def format_example(example):
    return {"text": f"### Instruction\n{example['instruction']}\n\n### Answer\n{example['response']}"}


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(script_args.model)
    tokenizer.pad_token = tokenizer.eos_token
    dataset = load_dataset(script_args.dataset, split="train").map(format_example)

    model = NeuronModelForCausalLM.from_pretrained(script_args.model, training_args.trn_config)
    lora = LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")

    sft_config = SFTConfig(
        output_dir=training_args.output_dir,
        max_seq_length=script_args.max_seq_length,
        bf16=True,
        tensor_parallel_size=8,  # shard attention and MLP over 8 NeuronCores
        zero_1=True,
        packing=True,
    )
    trainer = SFTTrainer(
        model=model,
        args=sft_config,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=lora,
    )
    trainer.train()
    if is_main_worker():
        trainer.save_model(training_args.output_dir)


def evaluation_args(output_dir: str) -> TrainingArguments:
    """Arguments for a quick evaluation run (no Neuron-only options)."""
    return TrainingArguments(output_dir=output_dir, per_device_eval_batch_size=8, bf16=True)


if __name__ == "__main__":
    main()
